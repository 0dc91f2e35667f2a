#include "server/coordinator/job_failover.h"

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "server/coordinator/job_start.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

// Moves shard `place.shard` on from its lost replica `lost`; returns what
// happened, for the job's status, or an error when the shard has no replica
// left to go on with.
absl::StatusOr<std::string> MoveOn(JobParts& parts, ShardGroup& shards, const LostReplica& lost,
                                   const ShardGroup::Place& place) {
  const int shard = place.shard;
  const ShardGroup::Shard* other = place.primary ? shards.backup(shard) : &shards.shard(shard);
  const std::string role =
      absl::StrCat("shard ", shard, place.primary ? "'s primary" : "'s backup");
  if (other == nullptr || !parts.context.members->HasLive(other->task)) {
    const ShardGroup::Shard* rebuilt = shards.rebuilt(shard);
    std::string why_alone = " was lost before";
    if (other != nullptr) {
      why_alone = absl::StrCat(", ", TaskName(other->task), ", is lost too");
    } else if (rebuilt != nullptr) {
      why_alone = absl::StrCat(", ", TaskName(rebuilt->task),
                               ", was being rebuilt and had not caught up");
    }
    return absl::UnavailableError(absl::StrCat(lost.why, "; it was ", role,
                                               " and its other replica", why_alone, ": shard ",
                                               shard, " lost both replicas"));
  }
  absl::StatusOr<ReplicaSetup> setup =
      place.primary ? shards.Promote(shard) : shards.DropBackup(shard);
  if (!setup.ok()) return setup.status();
  ChangeReplicaRequest request;
  request.set_job_id(parts.job_id);
  request.set_generation(parts.generation.number());
  *request.mutable_replica() = *setup;
  if (absl::StatusOr<ChangeReplicaResponse> changed = other->client->ChangeReplica(request);
      !changed.ok()) {
    return absl::UnavailableError(
        absl::StrCat(lost.why, "; it was ", role, " and ", TaskName(other->task),
                     " could not take over: ", changed.status().message()));
  }
  return absl::StrCat(lost.why, "; it was ", role, ": ", TaskName(other->task),
                      place.primary ? " took over as its primary" : " goes on alone", " (epoch ",
                      setup->epoch(), ")");
}

}  // namespace

void FailOver(JobParts& parts, const StartedJob& job, const std::vector<LostReplica>& lost) {
  const std::shared_ptr<ShardGroup> shards = parts.generation.shards();
  if (shards == nullptr || !shards->replicated()) return;
  bool primaries_moved = false;
  for (const LostReplica& replica : lost) {
    const std::optional<ShardGroup::Place> place = shards->Find(replica.task);
    if (!place.has_value()) continue;  // out of its shard's chain already
    absl::StatusOr<std::string> moved = MoveOn(parts, *shards, replica, *place);
    if (!moved.ok()) {
      LOG(ERROR) << "job " << parts.job_id << ": " << moved.status().message();
      parts.generation.MarkLost(std::string(moved.status().message()));
      continue;
    }
    const std::string summary = absl::StrCat(*moved, " at step ", job.step->value());
    LOG(WARNING) << "job " << parts.job_id << ": " << summary;
    parts.status.Update("the failover", [&](JobStatus& status) {
      status.set_failovers(status.failovers() + 1);
      status.set_last_failover(summary);
    });
    parts.status.Record();
    // No state or reason changes: the status event is what tells watchers.
    parts.status.PublishStatus();
    primaries_moved = primaries_moved || place->primary;
  }
  if (primaries_moved) RepublishShards(parts, job);
}

}  // namespace coordinator
}  // namespace pstrain
