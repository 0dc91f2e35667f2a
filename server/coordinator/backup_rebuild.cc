#include "server/coordinator/backup_rebuild.h"

#include <algorithm>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "server/coordinator/job_start.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

constexpr absl::Duration kMaxBackoff = absl::Minutes(1);

std::string Megabytes(int64_t bytes) {
  return absl::StrFormat("%.1f MB", static_cast<double>(bytes) / 1e6);
}

}  // namespace

BackupRebuilds::BackupRebuilds(JobParts& parts) : parts_(parts) {}

void BackupRebuilds::Tend(const StartedJob& job) {
  const std::shared_ptr<ShardGroup> shards = parts_.generation.shards();
  if (shards == nullptr || !shards->replicated()) return;
  attempts_.resize(shards->size());
  for (int i = 0; i < shards->size(); ++i) {
    Attempt& attempt = attempts_[i];
    if (attempt.active) {
      Check(i, job);
      continue;
    }
    const ShardGroup::Shard* outsider = shards->outsider(i);
    if (outsider == nullptr || parts_.clock.Now() < attempt.next_try) continue;
    absl::StatusOr<Member> member = parts_.context.members->Get(outsider->task);
    // A process that came back elsewhere joins at the next rollback or job.
    if (!member.ok() || !IsLive(member->state()) || member->address() != outsider->address) {
      continue;
    }
    Start(i, member->incarnation(), job);
  }
}

ChangeReplicaRequest BackupRebuilds::ChangeRequest(const ReplicaSetup& setup) const {
  ChangeReplicaRequest request;
  request.set_job_id(parts_.job_id);
  request.set_generation(parts_.generation.number());
  *request.mutable_replica() = setup;
  return request;
}

BackupRebuilds::~BackupRebuilds() {
  for (Attempt& attempt : attempts_) {
    if (attempt.setup == nullptr) continue;
    absl::MutexLock l(&attempt.setup->mu);
    attempt.setup->control = nullptr;
  }
}

void BackupRebuilds::Start(int shard, uint64_t incarnation, const StartedJob& job) {
  const std::shared_ptr<ShardGroup> shards = parts_.generation.shards();
  absl::StatusOr<ShardGroup::Rebuild> rebuild = shards->BeginRebuild(shard);
  if (!rebuild.ok()) return;
  Attempt& attempt = attempts_[shard];
  attempt.active = true;
  attempt.epoch = rebuild->epoch;
  attempt.backup = rebuild->backup;
  attempt.incarnation = incarnation;
  attempt.started = parts_.clock.Now();
  attempt.primary_setup = rebuild->primary_setup;
  attempt.setup = std::make_shared<Setup>();
  {
    absl::MutexLock l(&attempt.setup->mu);
    attempt.setup->control = &parts_.control;
  }
  LOG(INFO) << "job " << parts_.job_id << ": rebuilding " << TaskName(rebuild->backup->task)
            << " as shard " << shard << "'s backup (epoch " << rebuild->epoch << ")";
  // The process may hold an older run of the job, or this run in another
  // role (a primary that was replaced and woke up): dropped first.
  DropJobRequest drop;
  drop.set_job_id(parts_.job_id);
  // A drop that comes late (after a rollback set the process up for the
  // next run) changes nothing.
  drop.set_up_to_generation(parts_.generation.number());
  // `shards` keeps the group, whose processes `backup` and `primary` point
  // into, alive for as long as the thread runs, also past the job's end.
  std::thread([shards, drop, setup = attempt.setup, backup = rebuild->backup,
               primary = rebuild->primary,
               create = ShardVariablesRequest(parts_, job, shard, rebuild->backup_setup),
               change = ChangeRequest(rebuild->primary_setup)] {
    absl::Status status = backup->client->DropJob(drop);
    if (status.ok()) status = backup->client->CreateVariables(create).status();
    if (!status.ok()) {
      status = absl::Status(status.code(),
                            absl::StrCat(TaskName(backup->task),
                                         " could not be set up as a backup: ", status.message()));
    }
    int64_t state_bytes = 0;
    if (status.ok()) {
      absl::StatusOr<ChangeReplicaResponse> started = primary->client->ChangeReplica(change);
      if (started.ok()) {
        state_bytes = started->state_bytes();
      } else {
        status = absl::Status(
            started.status().code(),
            absl::StrCat(TaskName(primary->task),
                         " could not start the transfer: ", started.status().message()));
      }
    }
    absl::MutexLock l(&setup->mu);
    setup->result = status;
    setup->state_bytes = state_bytes;
    if (setup->control != nullptr) setup->control->Poke();
  }).detach();
}

void BackupRebuilds::Check(int shard, const StartedJob& job) {
  ShardGroup& shards = *parts_.generation.shards();
  Attempt& attempt = attempts_[shard];
  if (!shards.Rebuilding(shard, attempt.epoch)) {
    // A failover or rollback moved the shard on.
    attempt.active = false;
    return;
  }
  const std::string name = TaskName(attempt.backup->task);
  absl::StatusOr<Member> member = parts_.context.members->Get(attempt.backup->task);
  if (!member.ok() || !IsLive(member->state()) || member->incarnation() != attempt.incarnation) {
    return Abandon(shard, absl::StrCat(name, " was lost while it was rebuilt"));
  }
  const absl::Duration took = parts_.clock.Now() - attempt.started;
  if (took > parts_.options.backup_rebuild_timeout) {
    return Abandon(shard,
                   absl::StrCat(name, " did not catch up within ",
                                absl::FormatDuration(parts_.options.backup_rebuild_timeout)));
  }
  std::optional<absl::Status> set_up;
  {
    absl::MutexLock l(&attempt.setup->mu);
    set_up = attempt.setup->result;
  }
  if (!set_up.has_value()) return;  // still being set up
  if (!set_up->ok()) return Abandon(shard, std::string(set_up->message()));
  absl::StatusOr<ChangeReplicaResponse> progress =
      shards.shard(shard).client->ChangeReplica(ChangeRequest(attempt.primary_setup));
  if (!progress.ok()) {
    return Abandon(
        shard, absl::StrCat("the transfer to ", name, " failed: ", progress.status().message()));
  }
  if (progress->backup_joined()) Join(shard, job);
}

void BackupRebuilds::Join(int shard, const StartedJob& job) {
  ShardGroup& shards = *parts_.generation.shards();
  Attempt& attempt = attempts_[shard];
  attempt.active = false;
  if (!shards.JoinBackup(shard, attempt.epoch).ok()) return;
  attempt.backoff = absl::Seconds(1);
  // A loss of the new process costs the shard its backup from now on.
  parts_.generation.Adopt(attempt.backup->task.index(), attempt.incarnation);
  int64_t state_bytes = 0;
  {
    absl::MutexLock l(&attempt.setup->mu);
    state_bytes = attempt.setup->state_bytes;
  }
  const absl::Duration took = parts_.clock.Now() - attempt.started;
  const std::string summary =
      absl::StrCat(TaskName(attempt.backup->task), " rejoined shard ", shard,
                   " as its backup (state ", Megabytes(state_bytes), ", caught up in ",
                   absl::FormatDuration(absl::Trunc(took, absl::Milliseconds(10))), ") at step ",
                   job.step->value());
  LOG(INFO) << "job " << parts_.job_id << ": " << summary;
  parts_.status.Update("the backup rebuild", [&](JobStatus& status) {
    status.set_backups_rebuilt(status.backups_rebuilt() + 1);
    status.set_last_backup_rebuilt(summary);
  });
  parts_.status.Record();
  parts_.status.PublishStatus();
}

void BackupRebuilds::Abandon(int shard, const std::string& why) {
  ShardGroup& shards = *parts_.generation.shards();
  Attempt& attempt = attempts_[shard];
  attempt.active = false;
  const absl::Duration wait = attempt.backoff;
  attempt.next_try = parts_.clock.Now() + wait;
  attempt.backoff = std::min(wait * 2, kMaxBackoff);
  absl::StatusOr<ReplicaSetup> alone = shards.AbandonRebuild(shard, attempt.epoch);
  if (!alone.ok()) return;  // the shard moved on meanwhile
  LOG(WARNING) << "job " << parts_.job_id << ": shard " << shard
               << " goes on without a backup: " << why << "; trying again in "
               << absl::FormatDuration(wait);
  // The primary may have begun to wait for the backup: it stops. If it
  // cannot be told, it is lost, and its failover rolls the job back.
  if (absl::StatusOr<ChangeReplicaResponse> changed =
          shards.shard(shard).client->ChangeReplica(ChangeRequest(*alone));
      !changed.ok()) {
    LOG(WARNING) << "job " << parts_.job_id << ": shard " << shard
                 << "'s primary could not be told to go on alone: " << changed.status();
  }
}

}  // namespace coordinator
}  // namespace pstrain
