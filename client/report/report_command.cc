#include "client/report/report_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/output_path_flag.h"
#include "client/report/html_report.h"
#include "client/report/report_data.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/whole_file.h"
#include "common/status/status_macros.h"
#include "gflags/gflags.h"

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
              << " (see pstrain report --help)\n";
    return 2;
  }
  PosixEnv env;
  absl::StatusOr<WrittenReport> written = WriteReport(env, args[0], FLAGS_to);
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

Subcommand ReportCommand() {
  return {"report",
          "MODEL_DIR [--to=FILE.html]",
          "write an HTML page with plots of a model_dir's training and evaluation",
          "Writes one self-contained HTML page about a job's model_dir and prints its\n"
          "path: plots over the global step of the train loss, learning rate,\n"
          "examples/s (model_dir/train/scalars.jsonl) and of every eval metric\n"
          "(model_dir/eval/scalars.jsonl), the checkpoints, the exports and the job\n"
          "spec. The page needs no network and runs no scripts; open it in any\n"
          "browser. Missing files and non-finite values are listed on the page (and\n"
          "printed) and the report shows what there is.\n"
          "\n"
          "Exit codes: 0 written; 1 the page could not be written; 2 bad usage, no\n"
          "such model_dir, or nothing in it to report.\n"
          "\n"
          "Example:\n"
          "  pstrain report ~/pstrain/fashion_mnist_mlp\n"
          "  pstrain report ~/pstrain/fashion_mnist_mlp --to=/tmp/fmnist.html",
          {"to"},
          RunReportCommand};
}

}  // namespace pstrain
