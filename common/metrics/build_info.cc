#include "common/metrics/build_info.h"

#include "common/metrics/build_stamp.h"
#include "prometheus/gauge.h"

namespace pstrain {
namespace {

// Raised by hand at each release.
constexpr char kVersion[] = "0.1.0";

}  // namespace

BuildInfo CurrentBuildInfo() { return BuildInfo{kVersion, kBuildGitCommit}; }

void RegisterBuildInfo(prometheus::Registry& registry) {
  const BuildInfo build = CurrentBuildInfo();
  prometheus::BuildGauge()
      .Name("pstrain_build_info")
      .Help("Constant 1, labelled with the pstrain version and the git commit this binary was "
            "built from (git_commit=\"unknown\" unless built with --config=release).")
      .Register(registry)
      .Add({{"version", build.version}, {"git_commit", build.git_commit}})
      .Set(1);
}

}  // namespace pstrain
