#ifndef PSTRAIN_CLIENT_EXPORT_EXPORT_COMMAND_H_
#define PSTRAIN_CLIENT_EXPORT_EXPORT_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace pstrain {

// The help text of `pstrain export`, for the command dispatcher.
inline constexpr char kExportUsage[] =
    R"(pstrain export MODEL_DIR --to=DIR [--step=S]

Exports a checkpoint of a job's model_dir into DIR, a self-contained folder
(job spec, weights, MANIFEST with checksums) that `pstrain predict` and
LoadExportedModel read without the cluster, the checkpoint or the training
data. The checkpoint is the newest that verifies (damaged newer ones are
passed over, with a warning), or the one of step S. DIR must not exist.

Flags:
  --to=DIR     where to write the export (required)
  --step=S     export ckpt-S instead of the newest good checkpoint

Exit codes: 0 exported; 1 the export failed (a damaged checkpoint, data the
model is sized from that cannot be read); 2 bad usage or bad input (no such
model_dir or step, DIR exists).

Example:
  pstrain export /tmp/pstrain/fashion_mnist_mlp --to=/tmp/fashion_mnist_model
  pstrain export /tmp/pstrain/fashion_mnist_mlp --step=2000 --to=/tmp/fmnist_2000
)";

// `pstrain export MODEL_DIR`: runs ExportCheckpoint
// (client/export/checkpoint_export.h) with --to and --step and prints what
// it wrote. `args` are the positional arguments after the command name.
// Returns the exit code kExportUsage describes.
int RunExportCommand(const std::vector<std::string>& args);

// The exit code for an error of ExportCheckpoint: 2 when the input is at
// fault (NotFound, AlreadyExists, InvalidArgument), else 1.
int ExportExitCode(const absl::Status& status);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_EXPORT_EXPORT_COMMAND_H_
