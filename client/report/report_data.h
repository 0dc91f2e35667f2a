#ifndef PSTRAIN_CLIENT_REPORT_REPORT_DATA_H_
#define PSTRAIN_CLIENT_REPORT_REPORT_DATA_H_

// Everything `pstrain report` shows about a model_dir, read from what the
// coordinator and the evaluator write there:
//
//   model_dir/train/scalars.jsonl   loss, learning_rate, examples_per_sec, ...
//   model_dir/eval/scalars.jsonl    every eval metric per evaluated step
//   model_dir/ckpt-<step>/MANIFEST  the checkpoints, each with the job spec
//   <export_dir>/{best,final}/<step>/   exports, each with job_spec.pbtxt
//
// Whatever is missing or unreadable becomes a note rather than an error, so
// a report of a job still running, or one that never evaluated, shows what
// there is.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/report/scalar_series.h"
#include "common/checkpoint/env.h"

namespace pstrain {

// The train tags the coordinator writes, plotted first and in this order.
std::vector<std::string> TrainTagsInPlotOrder();

struct CheckpointSummary {
  int64_t step = 0;
  std::string path;
  // Empty for a checkpoint whose MANIFEST and file sizes check out; else
  // why it is not usable (never completed, damaged).
  std::string problem;
  bool final = false;
  int64_t created_unix_ms = 0;
  int num_shards = 0;
  int64_t bytes = 0;  // of its shard files
};

struct ExportSummary {
  std::string kind;  // "best" or "final"
  int64_t step = 0;
  std::string path;
  std::map<std::string, double> metrics;
};

struct ReportData {
  std::string model_dir;
  std::vector<ScalarSeries> train;  // TrainTagsInPlotOrder first
  std::vector<ScalarSeries> eval;   // by tag
  // What is missing or could not be read, each naming the file, for the
  // report to show and the command to print.
  std::vector<std::string> notes;
  // The job spec in text format, and where it was read from; empty when no
  // checkpoint or export holds one.
  std::string job_spec_text;
  std::string job_spec_source;
  std::vector<CheckpointSummary> checkpoints;  // oldest first
  std::vector<ExportSummary> exports;          // best, then final; oldest first
};

// Reads what there is to report about `model_dir`.
// NotFound: `model_dir` does not exist, or holds none of the files above
//   (the message names what is missing).
// Other codes: from the Env when listing model_dir fails.
absl::StatusOr<ReportData> CollectReportData(Env& env, const std::string& model_dir);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REPORT_REPORT_DATA_H_
