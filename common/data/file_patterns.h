#ifndef PSTRAIN_COMMON_DATA_FILE_PATTERNS_H_
#define PSTRAIN_COMMON_DATA_FILE_PATTERNS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace pstrain {

// The index pstrain keeps beside data file `path` (record_index.h):
// "<path>.pstrain-index".
std::string RecordIndexPath(const std::string& path);
// Whether `path` is such an index, or one being written.
bool IsRecordIndexPath(const std::string& path);

// The files `patterns` name, in order: each a path, or a glob pattern (*,
// ?, [...], as the shell's) whose matches come in name order, except the
// indexes kept beside data files (so "train*" still means the data). A file
// named twice is read twice.
// NotFound naming it: a path or pattern that matches no file.
// InvalidArgument: a match is a folder. PermissionDenied naming it: a
// folder on the way cannot be read. ResourceExhausted: out of memory.
absl::StatusOr<std::vector<std::string>> ExpandFilePatterns(absl::Span<const std::string> patterns);

// The file patterns of a source that names one in `path` and more in
// `paths` (CSV, libsvm): `path` first, when set.
template <typename Source>
std::vector<std::string> PathAndPatternsOf(const Source& source) {
  std::vector<std::string> patterns;
  if (!source.path().empty()) patterns.push_back(source.path());
  patterns.insert(patterns.end(), source.paths().begin(), source.paths().end());
  return patterns;
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_FILE_PATTERNS_H_
