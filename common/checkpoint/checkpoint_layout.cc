#include "common/checkpoint/checkpoint_layout.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/checkpoint/file_path.h"

namespace pstrain {

std::string CheckpointDirName(int64_t step) { return absl::StrCat(kCheckpointDirPrefix, step); }

std::string CheckpointDir(absl::string_view model_dir, int64_t step) {
  return JoinPath(model_dir, CheckpointDirName(step));
}

std::string TemporaryCheckpointDir(absl::string_view model_dir, int64_t step) {
  return absl::StrCat(CheckpointDir(model_dir, step), kTemporaryDirSuffix);
}

std::string DeletingCheckpointDir(absl::string_view model_dir, int64_t step) {
  return absl::StrCat(CheckpointDir(model_dir, step), kDeletingDirSuffix);
}

std::string ShardFileName(int shard_index, int num_shards) {
  return absl::StrFormat("shard-%05d-of-%05d", shard_index, num_shards);
}

std::optional<int64_t> ParseCheckpointDirName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, kCheckpointDirPrefix)) return std::nullopt;
  if (name.empty() || name.size() > 19) return std::nullopt;
  for (const char c : name) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  if (name.size() > 1 && name[0] == '0') return std::nullopt;
  int64_t step = 0;
  if (!absl::SimpleAtoi(name, &step)) return std::nullopt;
  return step;
}

CheckpointEntry ClassifyModelDirEntry(absl::string_view name) {
  CheckpointEntry entry;
  CheckpointEntryKind kind = CheckpointEntryKind::kCheckpoint;
  if (absl::ConsumeSuffix(&name, kTemporaryDirSuffix)) {
    kind = CheckpointEntryKind::kTemporary;
  } else if (absl::ConsumeSuffix(&name, kDeletingDirSuffix)) {
    kind = CheckpointEntryKind::kDeleting;
  }
  const std::optional<int64_t> step = ParseCheckpointDirName(name);
  if (!step.has_value()) return entry;
  entry.kind = kind;
  entry.step = *step;
  return entry;
}

}  // namespace pstrain
