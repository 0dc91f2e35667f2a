// pstrain: the command-line client of a pstrain cluster.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "client/cluster_command.h"
#include "client/exit_code.h"
#include "client/export/export_command.h"
#include "client/index_data_command.h"
#include "client/k8s_command.h"
#include "client/list_command.h"
#include "client/local_command.h"
#include "client/logs_command.h"
#include "client/make_criteo_logs_command.h"
#include "client/predict/predict_command.h"
#include "client/report/report_command.h"
#include "client/scale_command.h"
#include "client/shutdown_command.h"
#include "client/status_command.h"
#include "client/stop_command.h"
#include "client/submit_command.h"
#include "client/train_local_command.h"
#include "client/version_command.h"
#include "client/watch_command.h"
#include "client/write_libsvm_command.h"
#include "client/write_tfrecord_command.h"
#include "common/cli/subcommand.h"
#include "common/process/allocator_tuning.h"

namespace {

std::string Overview() {
  return absl::StrCat(
      "pstrain: run and drive pstrain training clusters.\n"
      "\n"
      "Commands that talk to a running cluster find its coordinator with\n"
      "--coordinator_address, else $PSTRAIN_COORDINATOR, else localhost:7070 (where\n"
      "`pstrain local` puts it), and send the token in --client_token_file, else\n"
      "$PSTRAIN_TOKEN.\n"
      "\n"
      "Exit codes:\n",
      absl::StripSuffix(pstrain::ExitCodeTable(), "\n"));
}

// Spellings of earlier releases, still accepted with a notice so that
// scripts keep working.
const std::vector<pstrain::RenamedFlag> kRenamedFlags = {
    {"coordinator", "coordinator_address"},
    {"token_file", "client_token_file"},
    {"out", "to"},
};

}  // namespace

int main(int argc, char** argv) {
  // train-local and predict fill batches as the workers and the evaluator do.
  pstrain::TuneAllocatorForLargeBuffers();
  // In the order `pstrain --help` lists them.
  const std::vector<pstrain::Subcommand> commands = {
      pstrain::LocalCommand(),      pstrain::SubmitCommand(),         pstrain::ValidateCommand(),
      pstrain::StatusCommand(),     pstrain::ListCommand(),           pstrain::WatchCommand(),
      pstrain::LogsCommand(),       pstrain::StopCommand(),           pstrain::ClusterCommand(),
      pstrain::ScaleCommand(),      pstrain::ShutdownCommand(),       pstrain::K8sCommand(),
      pstrain::ExportCommand(),     pstrain::PredictCommand(),        pstrain::ReportCommand(),
      pstrain::TrainLocalCommand(), pstrain::WriteTfRecordCommand(),  pstrain::WriteLibsvmCommand(),
      pstrain::IndexDataCommand(),  pstrain::MakeCriteoLogsCommand(), pstrain::VersionCommand(),
  };
  return pstrain::RunSubcommands("pstrain", Overview(), commands, argc, argv, kRenamedFlags);
}
