#ifndef PSTRAIN_COMMON_METRICS_INTERNAL_BUILD_STAMP_H_
#define PSTRAIN_COMMON_METRICS_INTERNAL_BUILD_STAMP_H_

namespace pstrain {
namespace metrics_internal {

// The git commit the binary was built from, or "unknown" in a build that
// does not stamp. Defined in build_stamp.cc, which build_stamp.sh writes: a
// generated source file rather than a generated header, so that a new
// commit recompiles that one file and relinks the binaries, and no compile
// action of another library sees it among its inputs.
extern const char kBuildGitCommit[];

}  // namespace metrics_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_METRICS_INTERNAL_BUILD_STAMP_H_
