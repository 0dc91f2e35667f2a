#ifndef PSTRAIN_CLIENT_LOCAL_COMMAND_H_
#define PSTRAIN_CLIENT_LOCAL_COMMAND_H_

#include <string>
#include <vector>

namespace pstrain {

// `pstrain local`: runs a whole cluster on this machine as real processes on
// loopback. `args` are the positional arguments after the command; its
// settings are --flags. Returns the process exit code.
int RunLocalCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOCAL_COMMAND_H_
