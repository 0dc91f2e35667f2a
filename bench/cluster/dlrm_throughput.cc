#include "bench/cluster/dlrm_throughput.h"

#include <filesystem>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/common/text_file.h"
#include "bench/report/markdown_table.h"
#include "client/binary_locator.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/criteo_logs.h"

namespace pstrain {
namespace bench {
namespace {

// More lines than the windows train on, so that no epoch ends inside one.
constexpr int64_t kLines = 300000;
// The single-process trainer's steps: long enough to leave its start-up
// out of the rate it reports.
constexpr int64_t kSingleProcessSteps = 400;

// The model of examples/criteo_dlrm.pbtxt (the reference's sizes, dynamic
// tables without limits), or the PyTorch DLRM of examples/onnx/dlrm.onnx.
std::string ModelText(bool imported) {
  if (!imported) return "model { dlrm { embedding { dim: 16 } } }\n";
  return absl::StrCat("model { onnx { path: \"",
                      std::filesystem::absolute("examples/onnx/dlrm.onnx").string(),
                      "\" loss: ONNX_LOSS_SIGMOID_CROSS_ENTROPY dynamic_tables { initializer: "
                      "\"tables.*.weight\" } } }\n");
}

// A job on `logs` held as `read_mode` says, until stopped.
std::string DlrmJobText(const std::string& name, bool imported, const std::string& logs,
                        const std::string& read_mode, const std::string& model_dir) {
  return absl::StrCat(
      "name: \"", name, "\"\n", "mode: JOB_MODE_TRAIN\n", ModelText(imported),
      "train_data { criteo { paths: \"", logs, "\" } read_mode: ", read_mode,
      " batch_size: 256 shuffle: true }\n", "optimizer { adam {} learning_rate: 0.003 }\n",
      "training { update_mode: UPDATE_MODE_ASYNC }\n", "stop { max_steps: 1000000 }\n",
      "checkpoint { model_dir: \"", model_dir, "\" every_seconds: 3600 max_to_keep: 1 }\n");
}

absl::StatusOr<SingleProcessRun> MeasureSingleProcessDlrm(ClusterBenchSettings& settings,
                                                          const std::string& logs) {
  Progress(absl::StrCat("dlrm: single-process trainer, ", kSingleProcessSteps, " steps"));
  absl::StatusOr<std::string> pstrain = LocateBinary("pstrain", settings.bin_dir);
  if (!pstrain.ok()) return pstrain.status();
  const std::string stem = absl::StrCat(settings.work_dir, "/train-local-dlrm-", settings.next_job);
  const std::string spec = DlrmJobText("single-process-dlrm", false, logs, "READ_MODE_IN_MEMORY",
                                       settings.NewModelDir("single-process-dlrm"));
  if (absl::Status written = WriteTextFile(stem + ".pbtxt", spec); !written.ok()) return written;
  absl::StatusOr<SingleProcessRun> run = RunSingleProcess(
      *pstrain, stem + ".pbtxt", {absl::StrCat("--max_steps=", kSingleProcessSteps)}, stem + ".log",
      absl::Seconds(600));
  if (run.ok()) {
    Progress(absl::StrFormat("  single process: %.0f examples/s over %.2f s", run->examples_per_sec,
                             run->train_seconds));
  }
  return run;
}

}  // namespace

absl::StatusOr<DlrmResults> RunDlrmThroughput(ClusterBenchSettings& settings,
                                              BenchCluster& cluster) {
  DlrmResults results;
  results.lines = kLines;
  const std::string dir = absl::StrCat(settings.work_dir, "/criteo-dlrm");
  Progress(absl::StrCat("dlrm: writing ", kLines, " gzipped lines under ", dir));
  PosixEnv env;
  if (absl::Status created = env.CreateDir(dir); !created.ok() && !absl::IsAlreadyExists(created)) {
    return created;
  }
  const std::string logs = dir + "/train.tsv.gz";
  CriteoLogsOptions options;
  options.num_examples = kLines;
  if (absl::Status written = WriteCriteoLogs(env, logs, options); !written.ok()) return written;

  absl::StatusOr<SingleProcessRun> single = MeasureSingleProcessDlrm(settings, logs);
  if (!single.ok()) return single.status();
  results.single_process = *single;
  struct Run {
    const char* name;
    bool imported;
    const char* read_mode;
    ThroughputWindow* window;
  };
  for (const Run& run :
       {Run{"built-in", false, "READ_MODE_IN_MEMORY", &results.built_in},
        Run{"built-in-streamed", false, "READ_MODE_STREAMED", &results.built_in_streamed},
        Run{"pytorch", true, "READ_MODE_IN_MEMORY", &results.imported}}) {
    const std::string name = absl::StrCat("bench-dlrm-", run.name);
    absl::StatusOr<ThroughputWindow> window = MeasureClusterJob(
        settings, cluster, absl::StrCat("DLRM ", run.name),
        DlrmJobText(name, run.imported, logs, run.read_mode, settings.NewModelDir(name)),
        settings.window);
    if (!window.ok()) return window.status();
    *run.window = *window;
  }
  return results;
}

void AddDlrmSection(const DlrmResults& results, MarkdownReport& report) {
  const double reference = results.single_process.examples_per_sec;
  MarkdownTable table({"run", "examples/s", "ratio to the single process",
                       "worker ms per step: data_wait / pull / compute / push_wait / idle",
                       "data_wait share of the step"});
  table.AddRow({"single process (`pstrain train-local`), built-in DLRM, in memory",
                Fixed(reference, 0), "1.00", "", ""});
  const std::pair<const char*, const ThroughputWindow*> rows[] = {
      {"cluster, built-in DLRM, in memory", &results.built_in},
      {"cluster, built-in DLRM, streamed from the gzipped file", &results.built_in_streamed},
      {"cluster, PyTorch's DLRM (examples/onnx/dlrm.onnx), in memory", &results.imported}};
  for (const auto& [name, window] : rows) {
    table.AddRow({name, Fixed(window->ExamplesPerSecond(), 0),
                  Fixed(window->ExamplesPerSecond() / reference, 2), MeanPhasesText(*window),
                  absl::StrCat(Fixed(100 * DataWaitShare(*window), 1), "%")});
  }
  report.SubHeading("DLRM on click logs in Criteo's layout: async, shared memory");
  report.Paragraph(absl::StrCat(
      "make-criteo-logs' generator writes ", results.lines,
      " gzipped lines; the built-in DLRM at the reference's Criteo Kaggle sizes (bottom MLP "
      "13-512-256-64-16, 26 dynamic tables of 16, dot interactions, top MLP 367-512-256-1; "
      "Adam, batch 256) trains on them with 2 workers and 1 parameter server, the logs held "
      "in memory, then streamed; then the same network exported from PyTorch trains as an "
      "ONNX graph of two inputs (dense_x, ids). The single-process trainer runs the built-in "
      "model in the same benchmark run (",
      results.single_process.steps, " steps)."));
  report.Table(table);
  const double imported =
      results.imported.ExamplesPerSecond() / results.built_in.ExamplesPerSecond();
  report.Target("PyTorch's DLRM on the cluster: at least 0.9x the built-in DLRM's examples/s",
                imported >= 0.9, absl::StrCat(Fixed(imported, 2), "x"));
  const double wait = DataWaitShare(results.built_in_streamed);
  report.Target("streamed gzipped Criteo logs, DLRM: data_wait under 5% of the step", wait < 0.05,
                absl::StrCat(Fixed(100 * wait, 1), "%"));
}

}  // namespace bench
}  // namespace pstrain
