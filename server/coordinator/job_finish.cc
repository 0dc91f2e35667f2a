#include "server/coordinator/job_finish.h"

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "glog/logging.h"
#include "server/coordinator/job_evaluation.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

// Waits until every live worker of the job heard the stop in a progress
// report (a worker told there is no more data has steps applied on the
// shards that are not yet in the global step; it reports them next), at
// most stop_drain_timeout.
void DrainWorkers(JobParts& parts) {
  WaitTracker tracker(parts.clock, "workers to stop",
                      parts.clock.Now() + parts.options.stop_drain_timeout,
                      parts.options.wait_reports, parts.WarningSink());
  for (;;) {
    std::vector<TaskId> pending;
    for (int index : parts.control.NotHeardStop(parts.workers.Ranks())) {
      const TaskId task = MakeTask(TASK_TYPE_WORKER, index);
      // A worker that is gone will not report; its leases went back already.
      if (parts.context.members->HasLive(task)) pending.push_back(task);
    }
    if (pending.empty()) return;
    tracker.SetWhat(TaskList(pending) + " to hear the stop");
    parts.status.SetWaitReason("", tracker);
    if (absl::Status expired = tracker.Check(); !expired.ok()) {
      LOG(WARNING) << "job " << parts.job_id
                   << ": taking the final checkpoint anyway: " << expired.message();
      return;
    }
    const absl::Status interrupted =
        parts.control.WaitForChange(parts.clock.Now() + parts.options.poll_interval);
    if (absl::IsAborted(interrupted)) return;
  }
}

absl::Status SaveFinalCheckpoint(JobParts& parts, const StartedJob& job) {
  parts.status.SetReason(absl::StrCat("saving the final checkpoint at step ", job.step->value()));
  if (absl::Status saved = parts.checkpoints.TakeFinal(*job.step, *job.data); !saved.ok()) {
    return saved;
  }
  parts.generation.MarkDone();
  return absl::OkStatus();
}

// The stop decided, by a user's stop, or "done" for an evaluation-only job
// that did what it was for; the job moves to FINISHING with it.
StopDecision DecideStop(JobParts& parts, const StartedJob* job) {
  std::optional<StopDecision> decision = job != nullptr ? job->stop->decision() : std::nullopt;
  if (!decision.has_value() && parts.control.stop_requested()) {
    decision = StopDecision{STOP_REASON_USER, "stopped by a user", 0};
  }
  if (!decision.has_value()) decision = StopDecision{STOP_REASON_UNSPECIFIED, "done", 0};
  parts.status.BeginFinishing(decision->reason, decision->message);
  return *decision;
}

}  // namespace

JobOutcome FinishJob(JobParts& parts) {
  // Null when a stop came while the job was starting.
  const std::shared_ptr<const StartedJob> job = parts.control.started();
  parts.control.MoveTo(JobPhase::kFinishing);
  const StopDecision decision = DecideStop(parts, job.get());
  const bool skip_final_work = parts.control.skips_final_work();
  absl::StatusOr<JobStatus> status = parts.status.Get();
  const StopReason reason = status.ok() ? status->stop_reason() : decision.reason;
  std::string message = status.ok() ? status->reason() : decision.message;

  // Training had started (the ledgers exist) and did not diverge: a
  // checkpoint of NaN weights would only poison a resume. Nor did
  // checkpoints fail: the final one would fail as they did.
  if (job != nullptr && job->step != nullptr && !skip_final_work &&
      reason != STOP_REASON_NAN_LOSS && reason != STOP_REASON_CHECKPOINT_FAILURES) {
    DrainWorkers(parts);
    if (absl::Status saved = SaveFinalCheckpoint(parts, *job); !saved.ok()) {
      return {JOB_STATE_FAILED, absl::StrCat(message, "; then the final checkpoint failed: ",
                                             saved.message(), parts.checkpoints.ResumeHint())};
    }
  }
  const std::optional<int64_t> final_step = parts.checkpoints.final_step();
  if (parts.evaluates && !skip_final_work && final_step.has_value()) {
    if (absl::Status evaluated = AwaitFinalEvaluation(parts, *final_step); !evaluated.ok()) {
      if (!absl::IsCancelled(evaluated)) {
        return {JOB_STATE_FAILED, absl::StrCat(message, "; then ", evaluated.message())};
      }
    }
  }
  const JobState state = EndStateFor(reason);
  if (reason == STOP_REASON_NAN_LOSS) {
    absl::StrAppend(&message,
                    ": training diverged; lower optimizer.learning_rate or set "
                    "optimizer.clip_norm");
  }
  if (state == JOB_STATE_FAILED || (state == JOB_STATE_STOPPED && parts.trains)) {
    absl::StrAppend(&message, parts.checkpoints.ResumeHint());
  }
  return {state, message};
}

void ReleaseJob(JobParts& parts) {
  parts.control.MoveTo(JobPhase::kEnded);
  // Joins waiting for a round that will not commit now learn why.
  parts.rounds.Void(WithReason(
      absl::FailedPreconditionError(absl::StrCat("job ", parts.job_id, " has ended; stop")),
      ERROR_REASON_JOB_ENDED));
  parts.checkpoints.ApplyRetention();
  parts.checkpoints.Close();
  const std::shared_ptr<const StartedJob> job = parts.control.started();
  if (job != nullptr && job->train_summaries != nullptr) {
    absl::Status closed = job->train_summaries->Close(job->step->value());
    if (!closed.ok()) LOG(WARNING) << "job " << parts.job_id << ": training summaries: " << closed;
  }
  parts.context.assignments->ClearJob(parts.job_id);
  for (const Member& member : parts.context.members->Members()) {
    if (member.job_id() == parts.job_id) {
      // Refused only for an incarnation replaced meanwhile: nothing to clear.
      parts.context.members->SetJob(member.task(), member.incarnation(), "").IgnoreError();
    }
  }
  const std::shared_ptr<ShardGroup> shards = parts.generation.shards();
  if (shards != nullptr && !parts.control.aborted()) {
    DropJobRequest request;
    request.set_job_id(parts.job_id);
    absl::Status dropped = shards->ForEachProcess([&](const ShardGroup::Shard& process) {
      // A process that is gone holds nothing to drop; calling it would only
      // wait out the retries.
      if (!parts.context.members->HasLive(process.task)) return absl::OkStatus();
      return process.client->DropJob(request);
    });
    if (!dropped.ok()) {
      LOG(WARNING) << "job " << parts.job_id
                   << ": dropping it from the parameter servers: " << dropped;
    }
  }
  if (parts.context.metrics != nullptr) {
    parts.context.metrics->SetTraining(0, 0);
    parts.context.metrics->SetDataLeasesOutstanding(0);
  }
}

}  // namespace coordinator
}  // namespace pstrain
