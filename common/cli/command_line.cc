#include "common/cli/command_line.h"

#include <cstdlib>
#include <iostream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

// pstrain's own flags are defined in files under its top-level folders;
// the logging and flag libraries' flags are not, and --helpfull shows them.
bool IsOwnFlag(const gflags::CommandLineFlagInfo& flag) {
  for (absl::string_view folder : {"common/", "server/", "worker/", "evaluator/", "client/",
                                   "tests/", "bench/", "examples/"}) {
    if (absl::StartsWith(flag.filename, folder)) return true;
  }
  return false;
}

std::string FormatFlag(const gflags::CommandLineFlagInfo& flag) {
  std::string text = absl::StrCat("  --", flag.name);
  if (flag.type != "bool") absl::StrAppend(&text, "=", flag.type == "string" ? "STRING" : "N");
  absl::StrAppend(&text, "\n      ", flag.description);
  const std::string default_value =
      flag.type == "string" ? absl::StrCat("\"", flag.default_value, "\"") : flag.default_value;
  absl::StrAppend(&text, " (default: ", default_value, ")\n");
  return text;
}

}  // namespace

std::string FormatHelp(absl::string_view program, absl::string_view usage) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::string text = absl::StrCat(usage, "\n");
  std::string own;
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    if (!IsOwnFlag(flag)) continue;
    own += FormatFlag(flag);
  }
  if (!own.empty()) absl::StrAppend(&text, "\nFlags:\n", own);
  absl::StrAppend(&text, "\n  --help      this text\n  --helpfull  every flag, including logging (",
                  program, " --helpfull)\n");
  return text;
}

void InitCommandLine(absl::string_view usage, int* argc, char*** argv) {
  const std::string program = (*argc > 0) ? std::string((*argv)[0]) : "pstrain";
  // Daemons run under Kubernetes and the local launcher, which both collect
  // stderr; glog's default of files under /tmp would hide the logs.
  gflags::SetCommandLineOptionWithMode("logtostderr", "true", gflags::SET_FLAGS_DEFAULT);
  gflags::SetUsageMessage(std::string(usage));
  gflags::ParseCommandLineNonHelpFlags(argc, argv, /*remove_flags=*/true);

  bool help = false;
  bool helpfull = false;
  gflags::CommandLineFlagInfo info;
  if (gflags::GetCommandLineFlagInfo("help", &info)) help = info.current_value == "true";
  if (gflags::GetCommandLineFlagInfo("helpfull", &info)) helpfull = info.current_value == "true";
  if (helpfull) {
    gflags::ShowUsageWithFlags(program.c_str());
    std::exit(0);
  }
  if (help) {
    std::cout << FormatHelp(program, usage);
    std::exit(0);
  }
  google::InitGoogleLogging(program.c_str());
}

}  // namespace pstrain
