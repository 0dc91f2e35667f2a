#include "common/data/file_patterns.h"

#include <glob.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace pstrain {

namespace {

// The first folder glob could not read, and why: glob(3) reports it through
// a plain function.
thread_local std::string unreadable_folder;
thread_local int unreadable_errno = 0;

int OnGlobError(const char* path, int error) {
  // A folder that is not there is no match, not a failure.
  if (error == ENOENT || error == ENOTDIR) return 0;
  unreadable_folder = path;
  unreadable_errno = error;
  return 1;
}

constexpr absl::string_view kIndexSuffix = ".pstrain-index";

}  // namespace

std::string RecordIndexPath(const std::string& path) { return absl::StrCat(path, kIndexSuffix); }

bool IsRecordIndexPath(const std::string& path) {
  // Also "<data>.pstrain-index.tmp-<n>", written before its rename.
  return absl::StrContains(path, kIndexSuffix);
}

absl::StatusOr<std::vector<std::string>> ExpandFilePatterns(
    absl::Span<const std::string> patterns) {
  std::vector<std::string> files;
  for (const std::string& pattern : patterns) {
    glob_t matches = {};
    const int result = ::glob(pattern.c_str(), 0, OnGlobError, &matches);
    const size_t before = files.size();
    for (size_t i = 0; result == 0 && i < matches.gl_pathc; ++i) {
      const std::string match = matches.gl_pathv[i];
      if (match != pattern && IsRecordIndexPath(match)) continue;
      files.push_back(match);
    }
    globfree(&matches);
    if (result == GLOB_NOMATCH || (result == 0 && files.size() == before)) {
      return absl::NotFoundError(absl::StrCat(pattern, ": no such file"));
    }
    if (result == GLOB_ABORTED) {
      return absl::PermissionDeniedError(
          absl::StrCat(pattern, ": folder ", unreadable_folder,
                       " cannot be read: ", std::strerror(unreadable_errno)));
    }
    if (result != 0) {
      return absl::ResourceExhaustedError(absl::StrCat(pattern, ": out of memory expanding it"));
    }
  }
  for (const std::string& file : files) {
    struct stat st;
    if (::stat(file.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(file, " is a folder, not a file"));
    }
  }
  return files;
}

}  // namespace pstrain
