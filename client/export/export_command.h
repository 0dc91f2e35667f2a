#ifndef PSTRAIN_CLIENT_EXPORT_EXPORT_COMMAND_H_
#define PSTRAIN_CLIENT_EXPORT_EXPORT_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain export` for the command table: its usage, help and flags.
Subcommand ExportCommand();

// `pstrain export MODEL_DIR`: runs ExportCheckpoint
// (client/export/checkpoint_export.h) with --to and --step and prints what
// it wrote. `args` are the positional arguments after the command name.
// Returns the exit code its help describes.
int RunExportCommand(const std::vector<std::string>& args);

// The exit code for an error of ExportCheckpoint: 2 when the input is at
// fault (NotFound, AlreadyExists, InvalidArgument), else 1.
int ExportExitCode(const absl::Status& status);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_EXPORT_EXPORT_COMMAND_H_
