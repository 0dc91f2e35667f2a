#ifndef PSTRAIN_COMMON_CHECKPOINT_FILE_PATH_H_
#define PSTRAIN_COMMON_CHECKPOINT_FILE_PATH_H_

// Path strings, handled lexically (no filesystem access). Thread-safe.

#include <string>

#include "absl/strings/string_view.h"

namespace pstrain {

// "a" + "b" -> "a/b"; "a/" + "b" -> "a/b"; "" + "b" -> "b".
std::string JoinPath(absl::string_view dir, absl::string_view name);

// The last component: "a/b/" -> "b", "a" -> "a", "/" -> "".
absl::string_view Basename(absl::string_view path);

// Everything before the last component: "a/b" -> "a", "a/b/" -> "a",
// "b" -> ".", "/b" -> "/".
std::string Dirname(absl::string_view path);

// Whether `name` can be used as one entry of a folder: not empty, not "."
// or "..", no '/' and no NUL.
bool IsPlainFileName(absl::string_view name);

// Whether `path` is `dir` or lies below it, comparing whole components:
// "/a/b" is under "/a" and "/a/", "/ab" is not; everything is under "/".
// Lexical: resolve symlinks first (Env::RealPath) where they may lead out.
bool IsPathUnder(absl::string_view path, absl::string_view dir);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_FILE_PATH_H_
