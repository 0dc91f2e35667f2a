#ifndef PSTRAIN_COMMON_METRICS_BUILD_INFO_H_
#define PSTRAIN_COMMON_METRICS_BUILD_INFO_H_

#include <string>

#include "absl/strings/string_view.h"
#include "prometheus/registry.h"

namespace pstrain {

// Which pstrain a binary is.
struct BuildInfo {
  // The release, kept by hand in build_info.cc.
  std::string version;
  // The git commit the binary was built from, with "-dirty" when the tree
  // had uncommitted changes. Stamped only by `--config=stamped` (which
  // scripts/pstrain builds with) and `--config=release`; "unknown" in every
  // other build, so that those stay cacheable across commits (see
  // build_stamp.sh).
  std::string git_commit;

  bool stamped() const { return git_commit != kUnstampedCommit; }

  static constexpr char kUnstampedCommit[] = "unknown";
};

BuildInfo CurrentBuildInfo();

// What `PROGRAM --version` prints, two lines:
//   pstrain 0.1.0
//   commit: 0123abcd... (or "0123abcd... (with uncommitted changes)", or
//           "unknown (unstamped build)")
std::string VersionText(absl::string_view program, const BuildInfo& build);

// Registers pstrain_build_info{version, git_commit} = 1 in `registry`, the
// conventional way to show a build in Prometheus (join it with `on(instance)`
// to label other series by version).
void RegisterBuildInfo(prometheus::Registry& registry);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_METRICS_BUILD_INFO_H_
