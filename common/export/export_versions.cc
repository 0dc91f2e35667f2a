#include "common/export/export_versions.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/export/export_manifest.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr absl::string_view kTemporarySuffix = ".tmp";

}  // namespace

std::string ExportVersionDir(absl::string_view parent, int64_t step) {
  return JoinPath(parent, absl::StrCat(step));
}

std::optional<int64_t> ParseExportVersionName(absl::string_view name) {
  if (name.empty() || name.size() > 19) return std::nullopt;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  if (name.size() > 1 && name[0] == '0') return std::nullopt;
  int64_t step = 0;
  if (!absl::SimpleAtoi(name, &step)) return std::nullopt;
  return step;
}

absl::StatusOr<std::vector<ExportVersion>> ListExportVersions(Env& env, const std::string& parent) {
  ASSIGN_OR_RETURN(const bool exists, PathExists(env, parent));
  if (!exists) return std::vector<ExportVersion>();
  ASSIGN_OR_RETURN(const std::vector<std::string> names, env.ListDir(parent));
  std::vector<ExportVersion> versions;
  for (const std::string& name : names) {
    const std::optional<int64_t> step = ParseExportVersionName(name);
    if (!step) continue;
    const std::string path = JoinPath(parent, name);
    ASSIGN_OR_RETURN(const bool complete, PathExists(env, JoinPath(path, kExportManifestFileName)));
    if (complete) versions.push_back({*step, path});
  }
  std::sort(versions.begin(), versions.end(),
            [](const ExportVersion& a, const ExportVersion& b) { return a.step < b.step; });
  return versions;
}

absl::StatusOr<std::vector<std::string>> RemoveOldExportVersions(Env& env,
                                                                 const std::string& parent,
                                                                 int keep) {
  std::vector<std::string> removed;
  ASSIGN_OR_RETURN(const std::vector<ExportVersion> versions, ListExportVersions(env, parent));
  if (versions.empty()) return removed;
  if (keep > 0 && static_cast<int>(versions.size()) > keep) {
    for (size_t i = 0; i + keep < versions.size(); ++i) {
      RETURN_IF_ERROR(RemoveTree(env, versions[i].path));
      removed.push_back(versions[i].path);
    }
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> names, env.ListDir(parent));
  for (const std::string& name : names) {
    if (!absl::EndsWith(name, kTemporarySuffix)) continue;
    const std::optional<int64_t> step =
        ParseExportVersionName(name.substr(0, name.size() - kTemporarySuffix.size()));
    if (!step || *step >= versions.back().step) continue;
    const std::string path = JoinPath(parent, name);
    RETURN_IF_ERROR(RemoveTree(env, path));
    removed.push_back(path);
  }
  return removed;
}

}  // namespace pstrain
