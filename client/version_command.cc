#include "client/version_command.h"

#include <iostream>

#include "client/exit_code.h"
#include "common/metrics/build_info.h"

namespace pstrain {
namespace {

int RunVersion(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "pstrain version: takes no arguments, got '" << args[0] << "'\n";
    return kExitUsage;
  }
  std::cout << VersionText("pstrain", CurrentBuildInfo());
  return kExitSuccess;
}

}  // namespace

Subcommand VersionCommand() {
  return {"version",
          "",
          "print the version and the git commit this pstrain was built from",
          "Prints the version and the git commit this pstrain (and the daemons built with\n"
          "it) was built from, the same that every daemon's pstrain_build_info series on\n"
          "/metrics carries. scripts/pstrain builds stamped with the commit (Bazel\n"
          "--config=stamped, or --config=release); a build without it says so:\n"
          "\"commit: unknown (unstamped build)\". A commit built with uncommitted changes\n"
          "says \"(with uncommitted changes)\". `pstrain --version` is the same.\n"
          "\n"
          "Example:\n"
          "  pstrain --version",
          {},
          RunVersion};
}

}  // namespace pstrain
