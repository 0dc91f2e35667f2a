#include "server/coordinator/job_rollback.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "server/coordinator/job_start.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

// Every shard live again: the lost one restarted (empty), the others still
// holding what the workers pushed since the checkpoint. Returns the
// incarnations of their processes.
absl::StatusOr<std::vector<uint64_t>> AwaitShardsBack(JobParts& parts, int num_ps,
                                                      const std::string& why) {
  // With replicas, every shard's primary and backup.
  num_ps *= 1 + parts.options.ps_replicas;
  WaitTracker tracker(parts.clock, "parameter servers",
                      parts.clock.Now() + parts.options.member_wait_timeout,
                      parts.options.wait_reports, parts.WarningSink());
  for (;;) {
    const std::vector<TaskId> missing = parts.context.members->MissingTasks(TASK_TYPE_PS, num_ps);
    if (missing.empty()) break;
    tracker.SetWhat(absl::StrCat(TaskList(missing), " to come back"));
    parts.status.SetWaitReason("training paused: ", tracker);
    if (absl::Status expired = tracker.Check(); !expired.ok()) {
      return absl::UnavailableError(absl::StrCat(
          why, "; ", expired.message(),
          ": restart it at the same address (its --listen or TF_CONFIG entry) to go on"));
    }
    absl::Status interrupted =
        parts.control.WaitForChange(parts.clock.Now() + parts.options.poll_interval);
    // The shards disagree until the rollback: no final checkpoint.
    if (absl::IsCancelled(interrupted)) parts.control.SkipFinalWork();
    RETURN_IF_ERROR(interrupted);
  }
  const std::shared_ptr<ShardGroup> shards = parts.generation.shards();
  std::vector<uint64_t> incarnations(num_ps);
  RETURN_IF_ERROR(shards->ForEachProcess([&](const ShardGroup::Shard& process) -> absl::Status {
    ASSIGN_OR_RETURN(const Member member, parts.context.members->Get(process.task));
    if (member.address() != process.address) {
      return absl::FailedPreconditionError(absl::StrCat(
          TaskName(member.task()), " came back at ", member.address(), ", not at ",
          process.address, " where the job placed its variables; restart it with --listen ",
          process.address, " or submit the job again to resume from its checkpoint"));
    }
    incarnations[process.task.index()] = member.incarnation();
    return absl::OkStatus();
  }));
  // Every replica starts the new run in its first role.
  shards->Reset();
  return incarnations;
}

}  // namespace

absl::StatusOr<StartPoint> RestoreNewestCheckpoint(JobParts& parts, const StartedJob& job,
                                                   std::optional<int> sync_slots) {
  RETURN_IF_ERROR(CreateVariables(parts, job));
  ASSIGN_OR_RETURN(const StartPoint start,
                   FindStartPoint(*parts.context.env, parts.spec, parts.job_id));
  RETURN_IF_ERROR(parts.checkpoints.Restore(start));
  // Every lease outstanding is void: its records are handed out again.
  const DataPosition position =
      start.resumes_data() ? start.manifest.data_position() : DataPosition();
  const int64_t step = start.global_step();
  if (absl::Status s = job.data->RestoreFrom(position, step, sync_slots); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("cannot roll the data position back to ",
                                               start.checkpoint_dir, ": ", s.message()));
  }
  RETURN_IF_ERROR(job.step->RestoreTo(step));
  parts.checkpoints.StartScheduleAt(step);
  parts.rounds.Restart(step, sync_slots);
  return start;
}

absl::Status RollBack(JobParts& parts, const StartedJob& job, const std::string& why) {
  const int64_t lost_at = job.step->value();
  parts.control.MoveTo(JobPhase::kRollingBack);
  // Rounds not committed yet are void with the run; their members push
  // again in the new generation.
  parts.rounds.Void(
      WithReason(absl::FailedPreconditionError(absl::StrCat(
                     "job ", parts.job_id, " is rolling back to a checkpoint (", why,
                     "); this run's open sync round is void: wait for the job's new assignment")),
                 ERROR_REASON_RUN_ROLLED_BACK));
  LOG(WARNING) << "job " << parts.job_id << ": " << why << "; training pauses at step " << lost_at
               << " until it is back, then every shard rolls back to the newest checkpoint";

  ASSIGN_OR_RETURN(std::vector<uint64_t> incarnations, AwaitShardsBack(parts, job.num_ps, why));
  // Losses of the processes the job ran on until now are dealt with by this
  // rollback; a loss of the new ones starts another.
  parts.generation.Renew(std::move(incarnations));
  parts.status.SetReason(absl::StrCat("training paused: rolling ", job.num_ps,
                                      " parameter servers back to the newest checkpoint"));
  ASSIGN_OR_RETURN(const StartPoint start, RestoreNewestCheckpoint(parts, job));
  const int64_t step = start.global_step();
  const std::string from =
      start.checkpoint_dir.empty() ? "fresh variables" : CheckpointDirName(start.step);
  const std::string summary =
      absl::StrCat(why, "; rolled back from step ", lost_at, " to ", from, " at step ", step);
  parts.status.Update("the rollback", [&](JobStatus& status) {
    status.set_rollbacks(status.rollbacks() + 1);
    status.set_last_rollback(summary);
  });
  parts.status.RestartProgressAt(step);
  parts.status.Record();
  if (parts.context.metrics != nullptr) parts.context.metrics->RecordRollback(lost_at - step);
  parts.control.MoveTo(JobPhase::kTraining);
  parts.status.SetReason("");
  LOG(WARNING) << "job " << parts.job_id << ": " << summary << "; training resumes (generation "
               << parts.generation.number() << ")";
  PublishAssignments(parts, job, start);
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
