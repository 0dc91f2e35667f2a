#include "client/binary_locator.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace {

// Where each binary's Bazel target lives, for the runfiles layout.
const std::map<std::string, std::string>& PackageOf() {
  static const auto* packages = new std::map<std::string, std::string>{
      {"pstrain-coordinator", "server/coordinator"},
      {"pstrain-ps", "server/ps"},
      {"pstrain-worker", "worker"},
      {"pstrain-evaluator", "evaluator"},
      {"pstrain", "client"},
  };
  return *packages;
}

std::string SelfPath() {
  char buffer[4096];
  ssize_t length = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return length > 0 ? std::string(buffer, length) : std::string();
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

absl::StatusOr<std::string> LocateBinary(const std::string& name, const std::string& bin_dir) {
  std::vector<std::string> candidates;
  if (!bin_dir.empty()) candidates.push_back(absl::StrCat(bin_dir, "/", name));
  const std::string self = SelfPath();
  if (!self.empty()) candidates.push_back(absl::StrCat(Dirname(self), "/", name));
  auto package = PackageOf().find(name);
  if (package != PackageOf().end()) {
    std::vector<std::string> runfiles_roots;
    if (const char* dir = std::getenv("RUNFILES_DIR")) runfiles_roots.push_back(dir);
    if (!self.empty()) runfiles_roots.push_back(self + ".runfiles");
    for (const std::string& root : runfiles_roots) {
      candidates.push_back(absl::StrCat(root, "/pstrain/", package->second, "/", name));
    }
  }
  for (const std::string& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      "cannot find the program ", name, "; looked at ", absl::StrJoin(candidates, ", "),
      " (build it with `bazel build //...` or pass --bin_dir)"));
}

}  // namespace pstrain
