#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_CHECKPOINTER_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_CHECKPOINTER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/checkpoint/env.h"
#include "common/job/checkpoint_schedule.h"
#include "protos/checkpoint.pb.h"
#include "protos/job.pb.h"
#include "protos/parameter_server.pb.h"
#include "server/coordinator/shard_group.h"
#include "server/coordinator/snapshot_hold.h"

namespace pstrain {
namespace coordinator {

// The data position a checkpoint records: `position` (the lease manager's,
// read before the shards snapshot) plus every record the snapshots' push
// ledgers say was applied, so that the position agrees with the saved
// parameters: leases outstanding while the checkpoint was taken are
// neither trained twice nor skipped after a restore. A push saved on some
// shards only (they snapshot at slightly different moments) counts as
// trained, like a push applied on some shards when a worker is lost.
DataPosition PositionOfSnapshots(const DataPosition& position,
                                 absl::Span<const SnapshotResponse> snapshots);

// Saves, restores and deletes the checkpoints of one job across its
// parameter-server shards (layout in common/checkpoint/checkpoint_layout.h).
// The coordinator writes the MANIFEST; each shard writes its own file.
// Thread-compatible: the job's runner calls it from one thread.
class JobCheckpointer {
 public:
  // `env`, `shards` and `hold` are borrowed and must outlive the
  // checkpointer. `hold` (may be null) is held while the shards snapshot, so
  // that every shard's file holds the same agreed sync rounds.
  JobCheckpointer(Env& env, const ShardGroup& shards, std::string model_dir, std::string job_id,
                  JobSpec spec, SnapshotHold* hold = nullptr);

  JobCheckpointer(const JobCheckpointer&) = delete;
  JobCheckpointer& operator=(const JobCheckpointer&) = delete;

  // Writes a checkpoint at the job's global step `step` or later: begins
  // model_dir/ckpt-<step>.tmp, has every shard snapshot its part into it
  // (at once, under the hold), names it by the most updates a shard's
  // snapshot holds when
  // that is more than `step` (the workers trained on since they reported),
  // and commits the MANIFEST with that global step, the shards' sizes and
  // checksums, PositionOfSnapshots (`position`, read before the
  // snapshots), the spec and whether it is the final checkpoint (`kind`).
  // Returns the MANIFEST. On failure nothing is left behind but the error:
  // AlreadyExists when the checkpoint of its step exists, a shard's error
  // naming the shard, or the commit's (DataLoss when a shard's file differs
  // from what it reported).
  absl::StatusOr<CheckpointManifest> Take(int64_t step, const DataPosition& position,
                                          CheckpointKind kind);

  // Restores every shard from the checkpoint in `checkpoint_dir` whose
  // MANIFEST is `manifest` (each shard checks its file's size and CRC32C).
  // FailedPrecondition: the checkpoint has a different number of shards
  // than the job (the message says how many to run with).
  absl::Status Restore(const std::string& checkpoint_dir, const CheckpointManifest& manifest);

  // Deletes model_dir/ckpt-<step>.
  absl::Status Delete(int64_t step);

  const std::string& model_dir() const { return model_dir_; }

 private:
  // Constant after construction.
  Env& env_;
  const ShardGroup& shards_;
  const std::string model_dir_;
  const std::string job_id_;
  const JobSpec spec_;
  SnapshotHold* const hold_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_CHECKPOINTER_H_
