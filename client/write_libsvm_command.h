#ifndef PSTRAIN_CLIENT_WRITE_LIBSVM_COMMAND_H_
#define PSTRAIN_CLIENT_WRITE_LIBSVM_COMMAND_H_

#include <string>
#include <vector>

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain write-libsvm` for the command table: its usage, help and flags.
Subcommand WriteLibsvmCommand();

// `pstrain write-libsvm JOB.pbtxt --libsvm_dir=DIR`: writes the job's
// train_data and eval_data as libsvm text in DIR and prints the data specs
// that read them. Returns the exit code its help describes.
int RunWriteLibsvmCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_WRITE_LIBSVM_COMMAND_H_
