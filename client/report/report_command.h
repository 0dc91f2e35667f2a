#ifndef PSTRAIN_CLIENT_REPORT_REPORT_COMMAND_H_
#define PSTRAIN_CLIENT_REPORT_REPORT_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/cli/subcommand.h"

namespace pstrain {

// `pstrain report` for the command table: its usage, help and flags.
Subcommand ReportCommand();

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
// arguments after the command name. Returns the exit code its help
// describes.
int RunReportCommand(const std::vector<std::string>& args);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REPORT_REPORT_COMMAND_H_
