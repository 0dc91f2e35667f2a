#ifndef PSTRAIN_CLIENT_REPORT_REPORT_COMMAND_H_
#define PSTRAIN_CLIENT_REPORT_REPORT_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"

namespace pstrain {

// The help text of `pstrain report`, for the command dispatcher.
inline constexpr char kReportUsage[] =
    R"(pstrain report MODEL_DIR [--out=FILE]

Writes one self-contained HTML page about a job's model_dir and prints its
path: plots over the global step of the train loss, learning rate,
examples/s (model_dir/train/scalars.jsonl) and of every eval metric
(model_dir/eval/scalars.jsonl), the checkpoints, the exports and the job
spec. The page needs no network and runs no scripts; open it in any
browser. Missing files and non-finite values are listed on the page (and
printed) and the report shows what there is.

Flags:
  --out=FILE   where to write the page (default MODEL_DIR/report.html)

Exit codes: 0 written; 1 the page could not be written; 2 bad usage, no
such model_dir, or nothing in it to report.

Example:
  pstrain report /tmp/pstrain/fashion_mnist_mlp
  pstrain report /tmp/pstrain/fashion_mnist_mlp --out=/tmp/fmnist.html
)";

struct WrittenReport {
  std::string path;
  // What was missing or skipped (CollectReportData's notes).
  std::vector<std::string> notes;
};

// Collects the report data of `model_dir` (client/report/report_data.h),
// renders it and writes it to `out_path` (model_dir/report.html when
// empty), replacing the file atomically.
// NotFound: as CollectReportData (no model_dir, or nothing to report).
// The Env's errors when the file cannot be written (NotFound when the
// folder of `out_path` does not exist).
absl::StatusOr<WrittenReport> WriteReport(Env& env, const std::string& model_dir,
                                          const std::string& out_path);

// `pstrain report MODEL_DIR`: runs WriteReport with --out, prints the notes
// to stderr and the page's path to stdout. `args` are the positional
// arguments after the command name. Returns the exit code kReportUsage
// describes.
int RunReportCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REPORT_REPORT_COMMAND_H_
