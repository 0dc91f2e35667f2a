#ifndef PSTRAIN_CLIENT_LOCAL_COMMAND_H_
#define PSTRAIN_CLIENT_LOCAL_COMMAND_H_

#include <string>
#include <vector>

namespace pstrain {

// `pstrain local [JOB.pbtxt]`: runs a whole cluster on this machine as real
// processes on loopback; with a job spec, submits it, shows its progress and
// prints its final metrics; then stops every process. `args` are the
// positional arguments after the command; its settings are --flags. Returns
// the process exit code: 0 success, 1 the job failed or was stopped or a
// process misbehaved, 2 bad usage or an invalid spec.
int RunLocalCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOCAL_COMMAND_H_
