#include "common/cli/command_line.h"

#include <cstdlib>
#include <iostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/cli/flag_help.h"
#include "gflags/gflags.h"
#include "glog/logging.h"

namespace pstrain {

std::string FormatHelp(absl::string_view program, absl::string_view usage) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::string text = absl::StrCat(usage, "\n");
  std::string own;
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    if (!IsOwnFlag(flag)) continue;
    own += FormatFlagHelp(flag);
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
