#include "client/report/report_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/report/html_report.h"
#include "client/report/report_data.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/whole_file.h"
#include "common/status/status_macros.h"
#include "gflags/gflags.h"

DEFINE_string(out, "", "report: the HTML file to write (default MODEL_DIR/report.html)");

namespace pstrain {

absl::StatusOr<WrittenReport> WriteReport(Env& env, const std::string& model_dir,
                                          const std::string& out_path) {
  ASSIGN_OR_RETURN(const ReportData data, CollectReportData(env, model_dir));
  WrittenReport written;
  written.path = out_path.empty() ? JoinPath(model_dir, "report.html") : out_path;
  written.notes = data.notes;
  absl::Status status = WriteFileAtomically(env, written.path, RenderHtmlReport(data));
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("cannot write ", written.path, ": ", status.message()));
  }
  return written;
}

int RunReportCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain report: expected one argument, the job's model_dir; got " << args.size()
              << "\n\n"
              << kReportUsage;
    return 2;
  }
  PosixEnv env;
  absl::StatusOr<WrittenReport> written = WriteReport(env, args[0], FLAGS_out);
  if (!written.ok()) {
    std::cerr << "pstrain report: " << written.status().message() << "\n";
    // Nothing to report is the input's fault; a page that cannot be written
    // is the operation's, unless its folder does not exist.
    return absl::IsNotFound(written.status()) || absl::IsInvalidArgument(written.status()) ? 2 : 1;
  }
  for (const std::string& note : written->notes) std::cerr << "pstrain report: " << note << "\n";
  std::cout << written->path << "\n";
  return 0;
}

}  // namespace pstrain
