#include "client/export/export_command.h"

#include <iostream>
#include <optional>

#include "absl/strings/str_join.h"
#include "client/export/checkpoint_export.h"
#include "client/output_path_flag.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "gflags/gflags.h"

DEFINE_int64(step, -1, "export: the step of the checkpoint to export (-1: the newest good one)");

namespace pstrain {

int ExportExitCode(const absl::Status& status) {
  if (status.ok()) return 0;
  if (absl::IsNotFound(status) || absl::IsAlreadyExists(status) ||
      absl::IsInvalidArgument(status)) {
    return 2;
  }
  return 1;
}

int RunExportCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain export: expected one argument, the job's model_dir; got " << args.size()
              << " (see pstrain export --help)\n";
    return 2;
  }
  if (FLAGS_to.empty()) {
    std::cerr << "pstrain export: --to is required: the folder to write the export to\n";
    return 2;
  }
  if (FLAGS_step < -1) {
    std::cerr << "pstrain export: --step must be a global step >= 0 (or -1 for the newest), got "
              << FLAGS_step << "\n";
    return 2;
  }
  std::optional<int64_t> step;
  if (FLAGS_step >= 0) step = FLAGS_step;
  PosixEnv env;
  absl::StatusOr<CheckpointExport> exported = ExportCheckpoint(env, args[0], step, FLAGS_to);
  if (!exported.ok()) {
    std::cerr << "pstrain export: " << exported.status().message() << "\n";
    return ExportExitCode(exported.status());
  }
  for (const SkippedCheckpoint& bad : exported->skipped) {
    std::cerr << "pstrain export: passed over damaged checkpoint " << bad.path << ": "
              << bad.reason.message() << "\n";
  }
  std::cout << "exported step " << exported->step << " (" << exported->checkpoint_dir << ") to "
            << exported->export_dir << "\n";
  if (exported->manifest.has_onnx_model()) {
    std::cout << "ONNX model for ONNX Runtime: "
              << JoinPath(exported->export_dir, exported->manifest.onnx_model().name()) << "\n";
  } else {
    std::cout << "no ONNX model written: " << exported->manifest.onnx_omitted() << "\n";
  }
  const auto& metrics = exported->manifest.metrics();
  if (!metrics.empty()) {
    std::map<std::string, double> sorted(metrics.begin(), metrics.end());
    std::cout << "eval metrics at that step: "
              << absl::StrJoin(sorted, " ", absl::PairFormatter("=")) << "\n";
  }
  return 0;
}

Subcommand ExportCommand() {
  return {"export",
          "MODEL_DIR --to=DIR",
          "export a checkpoint of a model_dir as a self-contained model folder",
          "Exports a checkpoint of a job's model_dir into DIR, a self-contained folder\n"
          "(job spec, weights, MANIFEST with checksums) that `pstrain predict` and\n"
          "LoadExportedModel read without the cluster, the checkpoint or the training\n"
          "data, with model.onnx: the same model as ONNX (opset 17) for ONNX Runtime\n"
          "(inputs \"dense\" or \"sparse_ids\" and \"sparse_values\", output\n"
          "\"predictions\"; see docs/models.md). A plug-in model that does not describe\n"
          "its ONNX graph is exported without it, and the command says so. The checkpoint is the "
          "newest that verifies (damaged newer ones are\n"
          "passed over, with a warning), or the one of step S. DIR must not exist.\n"
          "\n"
          "Exit codes: 0 exported; 1 the export failed (a damaged checkpoint, data the\n"
          "model is sized from that cannot be read); 2 bad usage or bad input (no such\n"
          "model_dir or step, DIR exists).\n"
          "\n"
          "Example:\n"
          "  pstrain export ~/pstrain/fashion_mnist_mlp --to=/tmp/fashion_mnist_model\n"
          "  pstrain export ~/pstrain/fashion_mnist_mlp --step=2000 --to=/tmp/fmnist_2000",
          {"to", "step"},
          RunExportCommand};
}

}  // namespace pstrain
