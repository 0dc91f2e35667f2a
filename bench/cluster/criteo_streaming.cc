#include "bench/cluster/criteo_streaming.h"

#include <filesystem>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/report/markdown_table.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/criteo_logs.h"

namespace pstrain {
namespace bench {
namespace {

// Half a million lines: 130 MB inflated, and more than the windows train
// on, so that no epoch ends inside one.
constexpr int64_t kLines = 500000;

// The job of examples/criteo_wide_and_deep.pbtxt without its limits and
// schedule, running until stopped, on `logs` held as `read_mode` says.
std::string CriteoJobText(const std::string& name, const std::string& logs,
                          const std::string& read_mode, const std::string& model_dir) {
  return absl::StrCat(
      "name: \"", name, "\"\n", "mode: JOB_MODE_TRAIN\n",
      "model { wide_and_deep { embedding { dim: 16 } hidden_units: [64, 32] } }\n",
      "train_data { criteo { paths: \"", logs, "\" } read_mode: ", read_mode,
      " batch_size: 256 shuffle: true }\n", "optimizer { adam {} learning_rate: 0.003 }\n",
      "training { update_mode: UPDATE_MODE_ASYNC }\n", "stop { max_steps: 1000000 }\n",
      "checkpoint { model_dir: \"", model_dir, "\" every_seconds: 3600 max_to_keep: 1 }\n");
}

}  // namespace

absl::StatusOr<CriteoStreamingResults> RunCriteoStreaming(ClusterBenchSettings& settings,
                                                          BenchCluster& cluster) {
  CriteoStreamingResults results;
  results.lines = kLines;
  const std::string dir = absl::StrCat(settings.work_dir, "/criteo");
  Progress(absl::StrCat("criteo: writing ", kLines, " gzipped lines under ", dir));
  PosixEnv env;
  if (absl::Status created = env.CreateDir(dir); !created.ok() && !absl::IsAlreadyExists(created)) {
    return created;
  }
  const std::string plain = dir + "/train.tsv";
  const std::string gzipped = dir + "/train.tsv.gz";
  CriteoLogsOptions options;
  options.num_examples = kLines;
  for (const std::string& logs : {plain, gzipped}) {
    if (absl::Status written = WriteCriteoLogs(env, logs, options); !written.ok()) return written;
  }
  results.gzip_bytes = static_cast<int64_t>(std::filesystem::file_size(gzipped));

  struct Run {
    const char* name;
    const std::string& logs;
    const char* read_mode;
    ThroughputWindow* window;
  };
  for (const Run& run :
       {Run{"in-memory", gzipped, "READ_MODE_IN_MEMORY", &results.in_memory},
        Run{"streamed-plain", plain, "READ_MODE_STREAMED", &results.streamed_plain},
        Run{"streamed-gzip", gzipped, "READ_MODE_STREAMED", &results.streamed_gzip}}) {
    const std::string name = absl::StrCat("bench-criteo-", run.name);
    absl::StatusOr<ThroughputWindow> window = MeasureClusterJob(
        settings, cluster, absl::StrCat("wide-and-deep, Criteo logs ", run.name),
        CriteoJobText(name, run.logs, run.read_mode, settings.NewModelDir(name)), settings.window);
    if (!window.ok()) return window.status();
    *run.window = *window;
  }
  return results;
}

void AddCriteoSection(const CriteoStreamingResults& results, MarkdownReport& report) {
  MarkdownTable table({"training logs", "examples/s", "ratio to in memory",
                       "worker ms per step: data_wait / pull / compute / push_wait / idle",
                       "data_wait share of the step"});
  const std::pair<const char*, const ThroughputWindow*> rows[] = {
      {"in memory (the gzipped file inflated and parsed whole when the job starts)",
       &results.in_memory},
      {"streamed from the plain file (blocks of 1024 lines, windows of 8)",
       &results.streamed_plain},
      {"streamed from the gzipped file (each block inflated from the access point before it)",
       &results.streamed_gzip}};
  for (const auto& [name, window] : rows) {
    table.AddRow({name, Fixed(window->ExamplesPerSecond(), 0),
                  Fixed(window->ExamplesPerSecond() / results.in_memory.ExamplesPerSecond(), 2),
                  MeanPhasesText(*window),
                  absl::StrCat(Fixed(100 * DataWaitShare(*window), 1), "%")});
  }
  report.SubHeading("Click logs in Criteo's layout: wide-and-deep, async, shared memory");
  report.Paragraph(absl::StrCat(
      "make-criteo-logs' generator writes ", results.lines, " lines, plain and gzipped (",
      Fixed(results.gzip_bytes / 1e6, 1),
      " MB); wide-and-deep (embeddings of 16, hidden 64-32, Adam, batch 256) trains on them "
      "with 2 workers and 1 parameter server, first holding the logs in memory, then "
      "streaming them from each file. data_wait is the time a step waits for its batch."));
  report.Table(table);
  for (const auto& [what, window] :
       {std::make_pair("streamed plain Criteo logs", &results.streamed_plain),
        std::make_pair("streamed gzipped Criteo logs", &results.streamed_gzip)}) {
    const double wait = DataWaitShare(*window);
    report.Target(absl::StrCat(what, ": data_wait under 5% of the step"), wait < 0.05,
                  absl::StrCat(Fixed(100 * wait, 1), "%"));
  }
}

}  // namespace bench
}  // namespace pstrain
