#ifndef PSTRAIN_CLIENT_INDEX_DATA_COMMAND_H_
#define PSTRAIN_CLIENT_INDEX_DATA_COMMAND_H_

#include <string>
#include <vector>

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain index-data` for the command table: its usage, help and flags.
Subcommand IndexDataCommand();

// `pstrain index-data JOB.pbtxt`: builds the offset index beside each
// TFRecord file of the job's train_data and eval_data, as streamed reading
// would at its first read, and says what it found. Returns the exit code
// its help describes.
int RunIndexDataCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_INDEX_DATA_COMMAND_H_
