#include "common/metrics/build_info.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/metrics/internal/build_stamp.h"
#include "prometheus/gauge.h"

namespace pstrain {
namespace {

// Raised by hand at each release.
constexpr char kVersion[] = "0.1.0";

}  // namespace

BuildInfo CurrentBuildInfo() { return BuildInfo{kVersion, metrics_internal::kBuildGitCommit}; }

std::string VersionText(absl::string_view program, const BuildInfo& build) {
  std::string commit = "unknown (unstamped build)";
  if (build.stamped()) {
    absl::string_view hash = build.git_commit;
    const bool dirty = absl::ConsumeSuffix(&hash, "-dirty");
    commit = absl::StrCat(hash, dirty ? " (with uncommitted changes)" : "");
  }
  return absl::StrCat(program, " ", build.version, "\ncommit: ", commit, "\n");
}

void RegisterBuildInfo(prometheus::Registry& registry) {
  const BuildInfo build = CurrentBuildInfo();
  prometheus::BuildGauge()
      .Name("pstrain_build_info")
      .Help(
          "Constant 1, labelled with the pstrain version and the git commit this binary was "
          "built from (git_commit=\"unknown\" unless built with --config=stamped or "
          "--config=release).")
      .Register(registry)
      .Add({{"version", build.version}, {"git_commit", build.git_commit}})
      .Set(1);
}

}  // namespace pstrain
