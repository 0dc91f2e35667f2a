// The JobRunner methods that cluster RPCs and the coordinator call while the
// job runs (job_runner.cc holds the job's own thread). Each hands the call
// to the parts it concerns.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "server/coordinator/checkpoint_watch.h"
#include "server/coordinator/job_runner.h"
#include "server/coordinator/task_name.h"
#include "server/coordinator/task_work.h"

namespace pstrain {
namespace coordinator {
namespace {

// ReportEval of a checkpoint that was not evaluated (missing, skipped, none
// new, or the job cannot be evaluated).
void NoteNotEvaluated(JobParts& parts, const EvalReport& report) {
  const std::string evaluator = TaskName(report.task());
  const int64_t step = report.checkpoint_step();
  switch (report.status()) {
    case EVAL_STATUS_MISSING_CHECKPOINT:
      LOG(WARNING) << "job " << parts.job_id << ": " << evaluator << " cannot evaluate ckpt-"
                   << step << ": " << report.reason();
      parts.evaluations.MarkUnevaluable(step, report.reason());
      parts.control.Poke();
      parts.status.PublishSkippedEvaluation(step,
                                            absl::StrCat("cannot be evaluated: ", report.reason()));
      return;
    case EVAL_STATUS_SKIPPED:
      LOG(INFO) << "job " << parts.job_id << ": " << evaluator << " skipped ckpt-" << step << ": "
                << report.reason();
      parts.evaluations.Account(step);
      parts.status.PublishSkippedEvaluation(step,
                                            report.reason().empty() ? "skipped" : report.reason());
      return;
    case EVAL_STATUS_NO_NEW_CHECKPOINT:
      parts.evaluations.MarkEvaluatorDone(absl::StrCat(
          evaluator, " found no new checkpoint after ckpt-", step, ": ", report.reason()));
      parts.control.Poke();
      return;
    case EVAL_STATUS_FAILED:
      LOG(ERROR) << "job " << parts.job_id << ": " << evaluator
                 << " cannot evaluate it: " << report.reason();
      parts.control.Fail(absl::FailedPreconditionError(
          absl::StrCat(evaluator, " cannot evaluate the job: ", report.reason())));
      return;
    default:
      return;
  }
}

// A continuous evaluation follows a model_dir until its final checkpoint or
// max_steps; so does the job.
void NoteContinuousEvaluation(JobParts& parts, int64_t step, bool final) {
  const int64_t max_steps = parts.spec.stop().max_steps();
  if (final) {
    parts.evaluations.MarkEvaluatorDone(absl::StrCat("evaluated the final checkpoint ckpt-", step));
  } else if (max_steps > 0 && step >= max_steps) {
    parts.evaluations.MarkEvaluatorDone(
        absl::StrCat("evaluated ckpt-", step, ", at or past max_steps ", max_steps));
  }
}

// ReportEval with metrics: the job's status (first: the job may end as
// soon as it learns of this evaluation, and must end with it in its
// status), the metrics, the log and the event.
void RecordEvaluation(JobParts& parts, const EvalReport& report,
                      const std::map<std::string, double>& metrics, const EvalOutcome& outcome) {
  const int64_t step = report.checkpoint_step();
  const bool final = report.final() || parts.checkpoints.IsFinal(step);
  parts.evaluations.RecordMetrics(step, metrics);
  if (parts.context.metrics != nullptr) parts.context.metrics->RecordEvaluation(step, metrics);
  parts.status.Update("the evaluation", [&](JobStatus& status) {
    status.mutable_last_eval_metrics()->clear();
    status.mutable_last_eval_metrics()->insert(metrics.begin(), metrics.end());
    status.set_last_eval_step(step);
    if (outcome.is_best) status.set_best_checkpoint_step(step);
    if (!report.export_path().empty()) {
      status.set_export_path(report.export_path());
    } else if (!report.final_export_path().empty() && status.export_path().empty()) {
      status.set_export_path(report.final_export_path());
    }
  });
  parts.checkpoints.RefreshStatus();
  LOG(INFO) << "job " << parts.job_id << ": " << TaskName(report.task()) << " evaluated ckpt-"
            << step << (outcome.is_best ? " (best so far)" : "")
            << (outcome.stop.has_value() ? absl::StrCat("; stop: ", outcome.stop->message)
                                         : std::string());
  JobEvent event;
  EvalEvent* eval = event.mutable_eval();
  eval->set_checkpoint_step(step);
  eval->mutable_metrics()->insert(metrics.begin(), metrics.end());
  eval->set_is_best(outcome.is_best);
  eval->set_final(final);
  parts.status.Publish(std::move(event));
  if (parts.spec.mode() == JOB_MODE_CONTINUOUS_EVAL) NoteContinuousEvaluation(parts, step, final);
}

}  // namespace

absl::StatusOr<ProgressResponse> JobRunner::ReportProgress(const ProgressReport& report) {
  ASSIGN_OR_RETURN(const std::shared_ptr<const StartedJob> job,
                   parts_.control.Admit(JobCall::kReportProgress));
  if (report.generation() != 0 && report.generation() != parts_.generation.number()) {
    // Steps of a run the job rolled back from: they are not in the
    // parameters any more.
    return WithReason(
        absl::FailedPreconditionError(absl::StrCat(
            "job ", parts_.job_id, " rolled back to a checkpoint; the work of ", "generation ",
            report.generation(), " is void: take the job's new assignment")),
        ERROR_REASON_RUN_ROLLED_BACK);
  }
  if (job == nullptr || job->step == nullptr) {
    // Stopped while starting, or a job that evaluates only: there is no run
    // to report on.
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "job ", parts_.job_id, " does not train; it takes no progress reports")),
                      ERROR_REASON_JOB_ENDED);
  }
  ASSIGN_OR_RETURN(const int64_t step, job->step->RaiseTo(report.parameter_version()));
  ReportedProgress progress;
  progress.reporter = HolderName(report.task(), report.incarnation());
  if (report.seconds() > 0) progress.examples_per_sec = report.examples() / report.seconds();
  progress.step = step;
  if (report.steps() > 0) progress.loss = report.loss();
  progress.epoch = job->data->Stats().epoch;
  std::optional<StopDecision> decision = job->stop->OnProgress(step, progress.loss);
  if (!decision.has_value()) decision = job->CheckEndOfData(step);
  const bool stop = decision.has_value() || !parts_.control.TrainingGoesOn();
  if (stop && job->IsWorker(report.task())) parts_.control.NoteStopHeard(report.task().index());
  parts_.control.Poke();
  parts_.status.PublishProgress(progress, job->train_summaries.get());

  ProgressResponse response;
  response.set_global_step(step);
  response.set_stop(stop);
  if (stop) response.set_stop_reason(decision.has_value() ? decision->reason : STOP_REASON_USER);
  return response;
}

absl::StatusOr<DataLease> JobRunner::AcquireDataLease(const TaskId& task, uint64_t incarnation) {
  ASSIGN_OR_RETURN(const std::shared_ptr<const StartedJob> job,
                   parts_.control.Admit(JobCall::kAcquireDataLease));
  const bool stopping = job == nullptr || job->data == nullptr ||
                        !parts_.control.TrainingGoesOn() || job->stop->decision().has_value();
  // A worker told there is no more data trains no further, but has not
  // heard the stop yet: the steps it trained since its last report are
  // applied on the shards and not yet in the global step. It reports them
  // next, and hears the stop in that answer; only then may the final
  // checkpoint be taken, or it would be saved under too small a step.
  if (stopping) {
    DataLease lease;
    lease.set_end_of_data(true);
    return lease;
  }
  const std::string holder = HolderName(task, incarnation);
  // A job worker's sync slot is its rank.
  absl::StatusOr<DataLease> lease = job->sync_slots
                                        ? job->data->AcquireForSlot(holder, task.index())
                                        : job->data->Acquire(holder);
  if (lease.ok() && lease->end_of_data()) job->CheckEndOfData(job->step->value());
  return lease;
}

absl::Status JobRunner::CompleteDataLease(const CompleteDataLeaseRequest& request) {
  ASSIGN_OR_RETURN(const std::shared_ptr<const StartedJob> job,
                   parts_.control.Admit(JobCall::kCompleteDataLease));
  if (job == nullptr || job->data == nullptr) {
    return absl::NotFoundError(absl::StrCat("job ", parts_.job_id, " hands out no data leases"));
  }
  const std::string holder = HolderName(request.task(), request.incarnation());
  absl::Status status;
  if (request.outcome_unknown() && !job->sync_slots) {
    status = parts_.hand_back.CompleteUnknownOutcome(*job->data, holder, request.lease_id());
  } else {
    const std::vector<RecordRange> returned(request.returned().begin(), request.returned().end());
    status = job->data->Complete(request.lease_id(), holder, returned);
  }
  if (status.ok() && job->data->end_of_data()) {
    job->CheckEndOfData(job->step->value());
    parts_.control.Poke();
  }
  return status;
}

absl::StatusOr<EvalReportResponse> JobRunner::ReportEval(const EvalReport& report) {
  ASSIGN_OR_RETURN(const std::shared_ptr<const StartedJob> job,
                   parts_.control.Admit(JobCall::kReportEval));
  EvalReportResponse response;
  switch (report.status()) {
    case EVAL_STATUS_MISSING_CHECKPOINT:
    case EVAL_STATUS_SKIPPED:
    case EVAL_STATUS_NO_NEW_CHECKPOINT:
    case EVAL_STATUS_FAILED:
      NoteNotEvaluated(parts_, report);
      return response;
    default:
      break;
  }
  parts_.evaluations.Account(report.checkpoint_step());
  const std::map<std::string, double> metrics(report.metrics().begin(), report.metrics().end());
  // Nothing was evaluated, or the job was stopped while starting.
  if (metrics.empty() || job == nullptr) return response;
  ASSIGN_OR_RETURN(const EvalOutcome outcome, job->stop->OnEval(report.checkpoint_step(), metrics));
  response.set_is_best(outcome.is_best);
  RecordEvaluation(parts_, report, metrics, outcome);
  parts_.control.Poke();
  return response;
}

std::shared_ptr<StreamSource<CheckpointNotification>> JobRunner::WatchCheckpoints(
    const WatchCheckpointsRequest& request) {
  std::weak_ptr<JobRunner> runner = weak_from_this();
  return std::make_shared<CheckpointWatch>(
      parts_.job_id, HolderName(request.task(), request.incarnation()), request.after_step(),
      parts_.checkpoints.feed(), parts_.checkpoints.retention(), [runner] {
        // The job applies max_to_keep again.
        if (std::shared_ptr<JobRunner> alive = runner.lock()) alive->MembersChanged();
      });
}

absl::Status JobRunner::ReleaseCheckpoint(const ReleaseCheckpointRequest& request) {
  if (request.step() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("step must be >= 0, got ", request.step()));
  }
  // Not held is fine: a retry after a lost response.
  parts_.checkpoints.retention()
      ->Release(request.step(), HolderName(request.task(), request.incarnation()))
      .IgnoreError();
  // The job's loop applies max_to_keep again.
  parts_.control.Poke();
  return absl::OkStatus();
}

void JobRunner::JoinRound(const JoinRoundRequest& request, RoundKeeper::JoinDone done) {
  absl::StatusOr<std::shared_ptr<const StartedJob>> admitted =
      parts_.control.Admit(JobCall::kJoinRound);
  if (!admitted.ok()) return done(admitted.status());
  parts_.rounds.Join(request, std::move(done));
}

void JobRunner::MembersChanged() { parts_.control.Poke(); }

void JobRunner::MemberRegistered(const TaskId& task) {
  if (parts_.trains && task.type() == TASK_TYPE_WORKER) {
    const std::string name = TaskName(task);
    switch (parts_.workers.Join(task)) {
      case WorkerJoin::kJoined:
        LOG(INFO) << "job " << parts_.job_id << ": " << name << " joins as rank " << task.index()
                  << " (the job waited for " << parts_.workers.count() << " workers)";
        break;
      case WorkerJoin::kAtABoundary:
        LOG(INFO) << "job " << parts_.job_id << ": " << name
                  << " registered; the job's sync rounds have a slot per worker "
                     "(replicas_to_aggregate 0), dealt to worker/0 .. worker/"
                  << parts_.workers.count() - 1
                  << ": they are dealt again at a round boundary when the workers right above "
                     "join or the top ones leave";
        break;
      case WorkerJoin::kBeyondLimit:
        LOG(WARNING) << "job " << parts_.job_id << ": " << name
                     << " cannot join: workers join as worker/0 .. worker/"
                     << parts_.workers.max_workers() - 1
                     << " (the coordinator's --max_workers); it takes up the next job";
        break;
      case WorkerJoin::kAlreadyIn:
      case WorkerJoin::kNotYet:
        break;
    }
  }
  parts_.control.Poke();
}

void JobRunner::HandBack(const TaskId& task, uint64_t incarnation, absl::string_view why) {
  const std::shared_ptr<const StartedJob> job = parts_.control.started();
  const std::string holder = HolderName(task, incarnation);
  parts_.status.ForgetReporter(holder);
  // Before its ledgers are read: a push of it that a commit applies later
  // would be trained again by the records handed back now.
  if (task.type() == TASK_TYPE_WORKER) parts_.rounds.Drop(task.index(), incarnation);
  const bool trains = job != nullptr && job->data != nullptr;
  JobLedgers ledgers;
  ledgers.checkpoints = parts_.checkpoints.retention().get();
  int64_t before = 0;
  std::string trained;
  if (trains) {
    // A sync slot's lease waits whole for the slot's next holder, who skips
    // the rounds already completed.
    if (!job->sync_slots) trained = parts_.hand_back.ReturnUntrained(*job->data, holder);
    ledgers.data = job->data.get();
    before = job->data->Stats().leases_outstanding;
  }
  const std::string handed = HandBackWork(task, incarnation, ledgers);
  LOG(INFO) << "job " << parts_.job_id << ": " << why << "; " << trained << handed;
  if (trains && parts_.context.metrics != nullptr) {
    const int64_t requeued = before - job->data->Stats().leases_outstanding;
    if (requeued > 0) parts_.context.metrics->AddDataLeasesRequeued(requeued);
  }
  parts_.control.Poke();
  const JobPhase phase = parts_.control.phase();
  if (job == nullptr || phase == JobPhase::kEnded || task.type() != TASK_TYPE_PS ||
      task.index() >= job->num_ps * (1 + parts_.options.ps_replicas) ||
      !parts_.control.failure().ok() || !parts_.generation.Loses(task.index(), incarnation)) {
    return;
  }
  const std::string lost = absl::StrCat(TaskName(task), " (a parameter server of the job) ", why);
  if (phase == JobPhase::kTraining && parts_.options.ps_replicas > 0) {
    // Its shard's other replica takes over (job_failover.h).
    parts_.generation.MarkReplicaLost({task, lost});
    parts_.control.Poke();
    return;
  }
  if (phase == JobPhase::kTraining || phase == JobPhase::kRollingBack) {
    parts_.generation.MarkLost(lost);
    return;
  }
  parts_.control.Fail(absl::UnavailableError(
      absl::StrCat(lost, ": its part of the variables is gone; the job cannot go on without it")));
}

void JobRunner::RequestStop(StopMode mode) { parts_.control.RequestStop(mode); }

void JobRunner::Abort(std::string why) {
  parts_.control.Abort(std::move(why));
  // Shards connected later are cancelled as they connect.
  parts_.generation.CancelAll();
}

void JobRunner::Tick() {
  const std::shared_ptr<const StartedJob> job = parts_.control.started();
  if (job == nullptr || job->data == nullptr) return;
  const std::vector<DataLease> expired = job->data->ExpireLeases();
  if (!expired.empty()) {
    LOG(WARNING) << "job " << parts_.job_id << ": " << expired.size()
                 << " data leases expired; their records go back to the queue";
    if (parts_.context.metrics != nullptr) {
      parts_.context.metrics->AddDataLeasesRequeued(expired.size());
    }
  }
  if (parts_.context.metrics != nullptr) {
    parts_.context.metrics->SetTraining(job->step->value(), parts_.status.examples_per_sec());
    parts_.context.metrics->SetDataLeasesOutstanding(job->data->Stats().leases_outstanding);
  }
}

int64_t JobRunner::global_step() const {
  const std::shared_ptr<const StartedJob> job = parts_.control.started();
  return job != nullptr && job->step != nullptr ? job->step->value() : 0;
}

}  // namespace coordinator
}  // namespace pstrain
