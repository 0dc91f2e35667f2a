// pstrain: the command-line client of a pstrain cluster.

#include <vector>

#include "client/cluster_command.h"
#include "client/export/export_command.h"
#include "client/index_data_command.h"
#include "client/list_command.h"
#include "client/local_command.h"
#include "client/make_criteo_logs_command.h"
#include "client/predict/predict_command.h"
#include "client/report/report_command.h"
#include "client/shutdown_command.h"
#include "client/status_command.h"
#include "client/stop_command.h"
#include "client/submit_command.h"
#include "client/train_local_command.h"
#include "client/watch_command.h"
#include "client/write_libsvm_command.h"
#include "client/write_tfrecord_command.h"
#include "common/cli/subcommand.h"
#include "common/process/allocator_tuning.h"

namespace {

constexpr char kOverview[] =
    "pstrain: run and drive pstrain training clusters.\n"
    "\n"
    "Commands that talk to a running cluster find its coordinator with --coordinator,\n"
    "else $PSTRAIN_COORDINATOR, else localhost:7070 (where `pstrain local` puts it).\n"
    "Exit codes: 0 success; 1 the job failed or was stopped; 2 bad usage, an invalid\n"
    "job spec (or one over the cluster's per-job limits) or an unknown job id; 3 the\n"
    "coordinator cannot be reached; 4 the coordinator's queue is full (try again later).";

}  // namespace

int main(int argc, char** argv) {
  // train-local and predict fill batches as the workers and the evaluator do.
  pstrain::TuneAllocatorForLargeBuffers();
  // In the order `pstrain --help` lists them.
  const std::vector<pstrain::Subcommand> commands = {
      pstrain::LocalCommand(),          pstrain::SubmitCommand(),      pstrain::StatusCommand(),
      pstrain::ListCommand(),           pstrain::WatchCommand(),       pstrain::StopCommand(),
      pstrain::ClusterCommand(),        pstrain::ShutdownCommand(),    pstrain::ExportCommand(),
      pstrain::PredictCommand(),        pstrain::ReportCommand(),      pstrain::TrainLocalCommand(),
      pstrain::WriteTfRecordCommand(),  pstrain::WriteLibsvmCommand(), pstrain::IndexDataCommand(),
      pstrain::MakeCriteoLogsCommand(),
  };
  return pstrain::RunSubcommands("pstrain", kOverview, commands, argc, argv);
}
