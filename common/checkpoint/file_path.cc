#include "common/checkpoint/file_path.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

absl::string_view StripTrailingSlashes(absl::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

}  // namespace

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

absl::string_view Basename(absl::string_view path) {
  path = StripTrailingSlashes(path);
  if (path == "/") return "";
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

std::string Dirname(absl::string_view path) {
  path = StripTrailingSlashes(path);
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(StripTrailingSlashes(path.substr(0, slash)));
}

bool IsPlainFileName(absl::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == absl::string_view::npos && name.find('\0') == absl::string_view::npos;
}

bool IsPathUnder(absl::string_view path, absl::string_view dir) {
  dir = StripTrailingSlashes(dir);
  path = StripTrailingSlashes(path);
  if (dir.empty()) return false;
  if (dir == "/") return !path.empty() && path.front() == '/';
  return path == dir || (absl::StartsWith(path, dir) && path[dir.size()] == '/');
}

}  // namespace pstrain
