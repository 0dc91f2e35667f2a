#ifndef PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_LAYOUT_H_
#define PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_LAYOUT_H_

// Names of the files and folders of checkpoints in a model_dir:
//
//   model_dir/
//     checkpoint                 text: the step of the newest checkpoint
//     ckpt-<step>/               a checkpoint, complete once MANIFEST is in it
//       shard-00000-of-00002     one file per parameter-server shard
//       shard-00001-of-00002
//       MANIFEST                 written last
//     ckpt-<step>.tmp/           being written, or abandoned by a crash
//     ckpt-<step>.deleting/      being deleted, or abandoned by a crash
//     train/  eval/              summaries (common/summary/)
//
// <step> is the global step in decimal without leading zeros, so each step
// has exactly one name. Everything here is thread-safe.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace pstrain {

inline constexpr absl::string_view kManifestFileName = "MANIFEST";
inline constexpr absl::string_view kCheckpointPointerFileName = "checkpoint";
inline constexpr absl::string_view kCheckpointDirPrefix = "ckpt-";
inline constexpr absl::string_view kTemporaryDirSuffix = ".tmp";
inline constexpr absl::string_view kDeletingDirSuffix = ".deleting";

// "ckpt-<step>".
std::string CheckpointDirName(int64_t step);
// model_dir/ckpt-<step>.
std::string CheckpointDir(absl::string_view model_dir, int64_t step);
// model_dir/ckpt-<step>.tmp: where a checkpoint is written before it exists.
std::string TemporaryCheckpointDir(absl::string_view model_dir, int64_t step);
// model_dir/ckpt-<step>.deleting: where a checkpoint goes to be deleted, so
// it stops existing at once and a crash mid-way leaves recognisable garbage.
std::string DeletingCheckpointDir(absl::string_view model_dir, int64_t step);

// "shard-<index>-of-<count>", both five digits or more; the name a
// parameter-server shard writes its part of a checkpoint under.
std::string ShardFileName(int shard_index, int num_shards);

// The step of a folder named "ckpt-<step>", or nothing for any other name
// (including "ckpt-007", "ckpt--1" and "ckpt-5.tmp").
std::optional<int64_t> ParseCheckpointDirName(absl::string_view name);

// What a folder entry of a model_dir is, by its name alone.
enum class CheckpointEntryKind {
  kOther,
  kCheckpoint,  // ckpt-<step>
  kTemporary,   // ckpt-<step>.tmp
  kDeleting,    // ckpt-<step>.deleting
};
struct CheckpointEntry {
  CheckpointEntryKind kind = CheckpointEntryKind::kOther;
  int64_t step = 0;
};
CheckpointEntry ClassifyModelDirEntry(absl::string_view name);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_CHECKPOINT_LAYOUT_H_
