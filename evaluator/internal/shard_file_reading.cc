#include "evaluator/internal/shard_file_reading.h"

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"

namespace pstrain {
namespace evaluator {
namespace internal {

absl::Status ReadShardFileVariables(
    Env& env, const std::string& checkpoint_dir, const CheckpointShardFile& entry,
    const std::function<absl::Status(ShardVariableValues&)>& visit) {
  // The shard file reader is moving from server/ps/shard_snapshot to
  // common/checkpoint/shard_file; until it is there, the evaluator cannot
  // decode shard files and says so rather than guessing at the format.
  (void)env;
  (void)visit;
  return absl::UnimplementedError(
      absl::StrCat("cannot read ", JoinPath(checkpoint_dir, entry.name()),
                   ": this build has no shard file reader (common/checkpoint/shard_file)"));
}

}  // namespace internal
}  // namespace evaluator
}  // namespace pstrain
