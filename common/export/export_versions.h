#ifndef PSTRAIN_COMMON_EXPORT_EXPORT_VERSIONS_H_
#define PSTRAIN_COMMON_EXPORT_EXPORT_VERSIONS_H_

// Versioned exports under one folder, as the evaluator keeps them
// (export_dir/best/, export_dir/final/): each version is an export folder
// named after the global step of its checkpoint,
//
//   export_dir/best/1200/   export_dir/best/3400/   export_dir/best/3400.tmp/
//
// and the newest complete one is the current model. Thread-safe when the Env
// is; one writer per folder at a time.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"

namespace pstrain {

// parent/<step>.
std::string ExportVersionDir(absl::string_view parent, int64_t step);

// The step of a version folder's name: decimal, no sign, no leading zeros.
std::optional<int64_t> ParseExportVersionName(absl::string_view name);

struct ExportVersion {
  int64_t step = 0;
  std::string path;
};

// The complete versions under `parent` (folders named <step> holding a
// MANIFEST), oldest first. A parent that does not exist holds none.
absl::StatusOr<std::vector<ExportVersion>> ListExportVersions(Env& env, const std::string& parent);

// Removes all but the newest `keep` complete versions under `parent`
// (keep <= 0 removes none), and the <step>.tmp folders of steps older than
// the newest complete version (abandoned by a crashed writer). Returns the
// paths removed.
absl::StatusOr<std::vector<std::string>> RemoveOldExportVersions(Env& env,
                                                                 const std::string& parent,
                                                                 int keep);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_EXPORT_VERSIONS_H_
