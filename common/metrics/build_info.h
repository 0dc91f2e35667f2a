#ifndef PSTRAIN_COMMON_METRICS_BUILD_INFO_H_
#define PSTRAIN_COMMON_METRICS_BUILD_INFO_H_

#include <string>

#include "prometheus/registry.h"

namespace pstrain {

// Which pstrain a binary is.
struct BuildInfo {
  // The release, kept by hand in build_info.cc.
  std::string version;
  // The git commit the binary was built from, stamped only into release
  // builds (`bazel build --config=release`); "unknown" otherwise, so that
  // ordinary builds stay cacheable across commits (see build_stamp.sh).
  std::string git_commit;
};

BuildInfo CurrentBuildInfo();

// Registers pstrain_build_info{version, git_commit} = 1 in `registry`, the
// conventional way to show a build in Prometheus (join it with `on(instance)`
// to label other series by version).
void RegisterBuildInfo(prometheus::Registry& registry);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_METRICS_BUILD_INFO_H_
