#ifndef PSTRAIN_CLIENT_MAKE_CRITEO_LOGS_COMMAND_H_
#define PSTRAIN_CLIENT_MAKE_CRITEO_LOGS_COMMAND_H_

#include <string>
#include <vector>

#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain make-criteo-logs` for the command table: its usage, help and
// flags.
Subcommand MakeCriteoLogsCommand();

// `pstrain make-criteo-logs DIR`: writes click logs in the Criteo layout
// drawn from a known model (common/data/criteo_logs.h) as DIR/train.tsv and
// DIR/test.tsv, prints the true model's AUC on the test file and the data
// specs that read the files. Returns the exit code its help describes.
int RunMakeCriteoLogsCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_MAKE_CRITEO_LOGS_COMMAND_H_
