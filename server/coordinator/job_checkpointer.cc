#include "server/coordinator/job_checkpointer.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_writer.h"
#include "common/checkpoint/file_path.h"
#include "glog/logging.h"
#include "server/coordinator/applied_records.h"

namespace pstrain {
namespace coordinator {

JobCheckpointer::JobCheckpointer(Env& env, const ShardGroup& shards, std::string model_dir,
                                 std::string job_id, JobSpec spec, SnapshotHold* hold)
    : env_(env),
      shards_(shards),
      model_dir_(std::move(model_dir)),
      job_id_(std::move(job_id)),
      spec_(std::move(spec)),
      hold_(hold) {}

DataPosition PositionOfSnapshots(const DataPosition& position,
                                 absl::Span<const SnapshotResponse> snapshots) {
  std::vector<PushLedger> ledgers;
  ledgers.reserve(snapshots.size());
  for (const SnapshotResponse& snapshot : snapshots) ledgers.push_back(snapshot.ledger());
  return WithAppliedRecords(position, MergeLedgers(ledgers));
}

absl::StatusOr<CheckpointManifest> JobCheckpointer::Take(int64_t step, const DataPosition& position,
                                                         CheckpointKind kind) {
  absl::StatusOr<PendingCheckpoint> pending = BeginCheckpoint(env_, model_dir_, step);
  if (!pending.ok()) return pending.status();
  const int n = shards_.size();
  std::vector<SnapshotResponse> snapshots(n);
  // No sync round commits while the shards snapshot: one that did would be
  // in some shards' files and not in others'.
  if (hold_ != nullptr) hold_->Hold();
  absl::Status status = shards_.ForEach([&](int i, ShardClient& client) -> absl::Status {
    SnapshotRequest request;
    request.set_job_id(job_id_);
    request.set_path(pending->ShardPath(i, n));
    request.set_global_step(step);
    absl::StatusOr<SnapshotResponse> response = client.Snapshot(request);
    if (!response.ok()) return response.status();
    snapshots[i] = *std::move(response);
    return absl::OkStatus();
  });
  if (hold_ != nullptr) hold_->Release();
  // Named by the updates its contents hold: the most any shard applied
  // (the global step, global_step.h), which is past `step` when workers
  // trained on since their last report.
  for (const SnapshotResponse& snapshot : snapshots) step = std::max(step, snapshot.version());
  if (status.ok()) status = RenamePendingCheckpoint(env_, *pending, step);
  absl::StatusOr<CheckpointManifest> committed;
  if (!status.ok()) {
    committed = status;
  } else {
    CheckpointManifest manifest;
    manifest.set_global_step(step);
    manifest.set_job_id(job_id_);
    *manifest.mutable_data_position() = PositionOfSnapshots(position, snapshots);
    *manifest.mutable_spec() = spec_;
    manifest.set_final(kind == CheckpointKind::kFinal);
    for (int i = 0; i < n; ++i) {
      CheckpointShardFile* file = manifest.add_shards();
      file->set_name(ShardFileName(i, n));
      file->set_shard_index(i);
      file->set_bytes(snapshots[i].bytes());
      file->set_crc32c(snapshots[i].crc32c());
    }
    committed = CommitCheckpoint(env_, *pending, std::move(manifest));
  }
  if (!committed.ok()) {
    if (absl::Status abandoned = AbandonCheckpoint(env_, *pending); !abandoned.ok()) {
      LOG(WARNING) << "could not remove the unfinished checkpoint " << pending->temporary_dir
                   << ": " << abandoned;
    } else {
      LOG(INFO) << "job " << job_id_ << ": removed the unfinished " << pending->temporary_dir;
    }
  }
  return committed;
}

absl::Status JobCheckpointer::Restore(const std::string& checkpoint_dir,
                                      const CheckpointManifest& manifest) {
  const int n = shards_.size();
  if (manifest.shards_size() != n) {
    return absl::FailedPreconditionError(absl::StrCat(
        checkpoint_dir, " was written by ", manifest.shards_size(),
        " parameter servers but this job runs on ", n, "; run the cluster with ",
        manifest.shards_size(), " parameter servers to resume from it, or use another model_dir"));
  }
  std::vector<const CheckpointShardFile*> files(n, nullptr);
  for (const CheckpointShardFile& file : manifest.shards()) {
    if (file.shard_index() < 0 || file.shard_index() >= n || files[file.shard_index()] != nullptr) {
      return absl::DataLossError(absl::StrCat(checkpoint_dir, "/MANIFEST lists shard index ",
                                              file.shard_index(), " out of place"));
    }
    files[file.shard_index()] = &file;
  }
  // Every replica of a shard restores the same file: both start the run
  // from the same state.
  return shards_.ForEachReplica(
      [&](int i, const ReplicaSetup& /*setup*/, const ShardGroup::Shard& process) {
        RestoreRequest request;
        request.set_job_id(job_id_);
        request.set_path(JoinPath(checkpoint_dir, files[i]->name()));
        request.set_expected_bytes(files[i]->bytes());
        request.set_expected_crc32c(files[i]->crc32c());
        return process.client->Restore(request).status();
      });
}

absl::Status JobCheckpointer::Delete(int64_t step) {
  return DeleteCheckpoint(env_, CheckpointDir(model_dir_, step));
}

}  // namespace coordinator
}  // namespace pstrain
