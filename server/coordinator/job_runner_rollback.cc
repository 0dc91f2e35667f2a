// JobRunner::RollBack: a lost parameter server costs the steps since the
// newest checkpoint, not the job. Training pauses, the shard comes back
// (restarted by whoever runs the cluster), every shard starts a new
// generation from that checkpoint, and workers take up new assignments.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "server/coordinator/job_runner.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {

uint64_t JobRunner::NextGeneration() {
  const uint64_t now =
      static_cast<uint64_t>(std::max<int64_t>(1, absl::ToUnixMicros(clock_.Now())));
  return std::max(now, generation_.load() + 1);
}

absl::Status JobRunner::AwaitShardsBack(const std::string& why) {
  // Every shard must be live again: the lost one restarted (empty), the
  // others still holding what the workers pushed since the checkpoint.
  WaitTracker tracker(clock_, "parameter servers", clock_.Now() + options_.member_wait_timeout,
                      options_.wait_reports, [this](const std::string& message) {
                        LOG(WARNING) << "job " << job_id_ << ": " << message;
                      });
  const int num_ps = Parts().num_ps;
  std::vector<uint64_t> incarnations(num_ps);
  for (;;) {
    const std::vector<TaskId> missing = context_.members->MissingTasks(TASK_TYPE_PS, num_ps);
    if (missing.empty()) break;
    std::vector<std::string> names;
    for (const TaskId& task : missing) names.push_back(TaskName(task));
    tracker.SetWhat(absl::StrCat(absl::StrJoin(names, ", "), " to come back"));
    SetWaitReason("training paused: ", tracker);
    if (absl::Status expired = tracker.Check(); !expired.ok()) {
      return absl::UnavailableError(absl::StrCat(
          why, "; ", expired.message(),
          ": restart it at the same address (its --listen or TF_CONFIG entry) to go on"));
    }
    absl::Status interrupted = WaitForChange(clock_.Now() + options_.poll_interval);
    if (absl::IsCancelled(interrupted)) {
      // The shards disagree until the rollback: no final checkpoint.
      absl::MutexLock lock(&mu_);
      immediately_ = true;
    }
    RETURN_IF_ERROR(interrupted);
  }
  const std::shared_ptr<ShardGroup> shards = Shards();
  for (int i = 0; i < num_ps; ++i) {
    ASSIGN_OR_RETURN(const Member member, context_.members->Get(shards->shard(i).task));
    if (member.address() != shards->shard(i).address) {
      return absl::FailedPreconditionError(absl::StrCat(
          TaskName(member.task()), " came back at ", member.address(), ", not at ",
          shards->shard(i).address,
          " where the job placed its variables; restart it with --listen ",
          shards->shard(i).address, " or submit the job again to resume from its checkpoint"));
    }
    incarnations[i] = member.incarnation();
  }
  {
    absl::MutexLock lock(&mu_);
    // Losses of the processes the job ran on until now are dealt with by
    // this rollback; a loss of the new ones starts another.
    shard_incarnations_ = incarnations;
    shard_lost_.reset();
  }

  return absl::OkStatus();
}

absl::Status JobRunner::RollBack(const std::string& why) {
  const JobParts& parts = Parts();
  const int64_t lost_at = parts.step->value();
  {
    absl::MutexLock lock(&mu_);
    MoveTo(JobPhase::kRollingBack);
  }
  LOG(WARNING) << "job " << job_id_ << ": " << why << "; training pauses at step " << lost_at
               << " until it is back, then every shard rolls back to the newest checkpoint";

  RETURN_IF_ERROR(AwaitShardsBack(why));
  generation_ = NextGeneration();
  SetReason(absl::StrCat("training paused: rolling ", parts.num_ps,
                         " parameter servers back to the newest checkpoint"));
  RETURN_IF_ERROR(CreateVariables(parts, *layout_));
  ASSIGN_OR_RETURN(const StartPoint start, FindStartPoint());
  if (!start.checkpoint_dir.empty()) {
    RETURN_IF_ERROR(checkpointer_->Restore(start.checkpoint_dir, start.manifest));
  }
  const int64_t step = start.warm_start ? 0 : start.step;
  // Every lease outstanding is void: its records are handed out again.
  const DataPosition position = start.checkpoint_dir.empty() || start.warm_start
                                    ? DataPosition()
                                    : start.manifest.data_position();
  if (absl::Status s = parts.data->RestoreFrom(position, step); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("cannot roll the data position back to ",
                                               start.checkpoint_dir, ": ", s.message()));
  }
  RETURN_IF_ERROR(parts.step->RestoreTo(step));
  schedule_ = std::make_unique<CheckpointSchedule>(spec_.checkpoint(), clock_, step);

  const std::string from =
      start.checkpoint_dir.empty() ? "fresh variables" : CheckpointDirName(start.step);
  const std::string summary =
      absl::StrCat(why, "; rolled back from step ", lost_at, " to ", from, " at step ", step);
  CheckQueueWrite("the rollback", context_.jobs->UpdateStatus(job_id_, [&](JobStatus& status) {
    status.set_rollbacks(status.rollbacks() + 1);
    status.set_last_rollback(summary);
  }));
  {
    // The one move of the published step backwards.
    absl::MutexLock lock(&progress_mu_);
    published_step_ = step;
    CheckQueueWrite("the rolled-back step", context_.jobs->RecordProgress(job_id_, step, 0, 0));
  }
  if (context_.record) {
    if (absl::StatusOr<JobStatus> job = context_.jobs->Get(job_id_); job.ok())
      context_.record(*job);
  }
  if (context_.metrics != nullptr) context_.metrics->RecordRollback(lost_at - step);
  {
    absl::MutexLock lock(&mu_);
    rates_.clear();
    MoveTo(JobPhase::kTraining);
  }
  SetReason("");
  LOG(WARNING) << "job " << job_id_ << ": " << summary << "; training resumes (generation "
               << generation_ << ")";
  PublishAssignments(parts, &*layout_, start);
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
