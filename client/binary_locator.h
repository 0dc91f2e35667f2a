#ifndef PSTRAIN_CLIENT_BINARY_LOCATOR_H_
#define PSTRAIN_CLIENT_BINARY_LOCATOR_H_

#include <string>

#include "absl/status/statusor.h"

namespace pstrain {

// Finds a pstrain binary (e.g. "pstrain-ps") for the local launcher, looking
// in order at:
//   1. `bin_dir`, when not empty;
//   2. the folder of the running program (an installed layout, the image);
//   3. the Bazel runfiles of the running program (`bazel run`, `bazel test`,
//      bazel-bin/client/pstrain), where it sits under its package folder.
// NotFound lists every place looked at.
absl::StatusOr<std::string> LocateBinary(const std::string& name, const std::string& bin_dir);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_BINARY_LOCATOR_H_
