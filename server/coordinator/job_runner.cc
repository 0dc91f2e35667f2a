#include "server/coordinator/job_runner.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/manifest.h"
#include "common/config/job_mode.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/sync_rounds.h"
#include "common/optimizer/learning_rate.h"
#include "common/status/status_macros.h"
#include "common/summary/file_summary_writer.h"
#include "glog/logging.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

TaskId Task(TaskType type, int index) {
  TaskId task;
  task.set_type(type);
  task.set_index(index);
  return task;
}

bool IsLive(MemberState state) { return state == MEMBER_STATE_IDLE || state == MEMBER_STATE_BUSY; }

// "ps/1, worker/0 and 3 more".
std::string TaskList(const std::vector<TaskId>& tasks) {
  constexpr size_t kShown = 4;
  std::vector<std::string> names;
  for (size_t i = 0; i < tasks.size() && i < kShown; ++i) names.push_back(TaskName(tasks[i]));
  std::string list = absl::StrJoin(names, ", ");
  if (tasks.size() > kShown) absl::StrAppend(&list, " and ", tasks.size() - kShown, " more");
  return list;
}

// 1 + the highest index of a live member of `type`, at least 1.
int RegisteredCount(const std::vector<Member>& members, TaskType type) {
  int count = 1;
  for (const Member& member : members) {
    if (member.task().type() == type && IsLive(member.state())) {
      count = std::max(count, member.task().index() + 1);
    }
  }
  return count;
}

}  // namespace

JobRunner::JobRunner(JobStatus job, JobRunnerOptions options, JobRunnerContext context)
    : job_id_(job.job_id()),
      spec_(job.spec()),
      options_(options),
      context_(std::move(context)),
      clock_(*context_.clock),
      trains_(JobModeTrains(spec_.mode())),
      evaluates_(JobModeEvaluates(spec_.mode())),
      model_dir_(spec_.checkpoint().model_dir()),
      feed_(std::make_shared<CheckpointFeed>()),
      retention_(std::make_shared<RetentionPolicy>(MaxToKeepOf(spec_.checkpoint()))),
      checkpoint_failures_(MaxConsecutiveFailuresOf(spec_.checkpoint())) {}

JobRunner::~JobRunner() = default;

// ------------------------------------------------------------ the phases --

void JobRunner::Run() {
  LOG(INFO) << "job " << job_id_ << " (" << JobMode_Name(spec_.mode()) << ") starts; model_dir "
            << model_dir_;
  PublishStatus();
  absl::Status status = Prepare();
  if (status.ok()) status = trains_ ? Train() : EvaluateOnly();
  Outcome outcome;
  if (status.ok() || absl::IsCancelled(status)) {
    outcome = Finish();
  } else {
    outcome.state = JOB_STATE_FAILED;
    outcome.message = std::string(status.message());
    std::shared_ptr<const JobParts> parts = StartedParts();
    if (parts != nullptr && parts->step != nullptr) absl::StrAppend(&outcome.message, ResumeHint());
  }
  // The cluster is free before the job is seen to end, so whoever waits for
  // the end may submit the next job at once.
  Cleanup();
  if (outcome.state == JOB_STATE_FAILED) {
    LOG(ERROR) << "job " << job_id_ << " failed: " << outcome.message;
  } else {
    LOG(INFO) << "job " << job_id_ << " ended " << JobStateName(outcome.state) << ": "
              << outcome.message;
  }
  End(outcome.state, outcome.message);
}

absl::Status JobRunner::WaitForMembers(JobParts& parts) {
  WaitTracker tracker(
      clock_, "members", clock_.Now() + options_.member_wait_timeout, options_.wait_reports,
      [this](const std::string& message) { LOG(WARNING) << "job " << job_id_ << ": " << message; });
  for (;;) {
    int num_ps = 0, num_workers = 0;
    const std::vector<TaskId> missing = MissingMembers(&num_ps, &num_workers);
    if (missing.empty()) {
      parts.num_ps = num_ps;
      parts.num_workers = num_workers;
      return absl::OkStatus();
    }
    tracker.SetWhat(TaskList(missing));
    SetWaitReason("", tracker);
    if (absl::Status expired = tracker.Check(); !expired.ok()) {
      return absl::DeadlineExceededError(absl::StrCat(
          expired.message(),
          ": start the missing tasks with --coordinator_address pointing here, or check "
          "their logs for why they cannot register"));
    }
    RETURN_IF_ERROR(WaitForChange(clock_.Now() + options_.poll_interval));
  }
}

std::vector<TaskId> JobRunner::MissingMembers(int* num_ps, int* num_workers) const {
  const std::vector<Member> members = context_.members->Members();
  std::vector<TaskId> missing;
  if (trains_) {
    *num_ps = options_.num_ps > 0 ? options_.num_ps : RegisteredCount(members, TASK_TYPE_PS);
    *num_workers = options_.num_workers > 0 ? options_.num_workers
                                            : RegisteredCount(members, TASK_TYPE_WORKER);
    for (const TaskId& task : context_.members->MissingTasks(TASK_TYPE_PS, *num_ps)) {
      missing.push_back(task);
    }
    for (const TaskId& task : context_.members->MissingTasks(TASK_TYPE_WORKER, *num_workers)) {
      missing.push_back(task);
    }
  }
  if (evaluates_) {
    for (const TaskId& task : context_.members->MissingTasks(TASK_TYPE_EVALUATOR, 1)) {
      missing.push_back(task);
    }
  }
  return missing;
}

absl::Status JobRunner::Prepare() {
  auto parts = std::make_shared<JobParts>();
  RETURN_IF_ERROR(WaitForMembers(*parts));
  const int num_ps = parts->num_ps;
  if (trains_ && UpdateModeOf(spec_.training()) == UPDATE_MODE_SYNC && num_ps > 1 &&
      !DealsLeasesToSyncSlots(*parts)) {
    // Each shard would take the first gradients of a round on its own: a
    // gradient applied on one and refused as late on another has its
    // records trained again. Refused until one shard decides for all.
    return absl::FailedPreconditionError(absl::StrCat(
        "sync mode with backup workers (training.replicas_to_aggregate ",
        spec_.training().replicas_to_aggregate(), " of ", parts->num_workers, " workers) on ",
        num_ps,
        " parameter servers is not supported yet: the shards would choose each round's "
        "gradients apart and train some records twice; set replicas_to_aggregate to 0 (every "
        "worker in each round) or run one parameter server"));
  }
  SetReason("planning: reading the data and building the model");
  absl::StatusOr<JobPlan> plan = context_.planner->Plan(spec_);
  if (!plan.ok()) {
    return absl::Status(plan.status().code(),
                        absl::StrCat("cannot set up the job: ", plan.status().message()));
  }
  LOG(INFO) << "job " << job_id_ << ": " << plan->description << ", " << plan->variables.size()
            << " variables";
  parts->stop = std::make_unique<StopConditions>(spec_, clock_, clock_.Now());
  StartPoint start;
  if (trains_) {
    ASSIGN_OR_RETURN(layout_, PlaceVariables(plan->variables, num_ps));
    RETURN_IF_ERROR(ConnectShards(num_ps));
    checkpointer_ =
        std::make_unique<JobCheckpointer>(*context_.env, *Shards(), model_dir_, job_id_, spec_);
    SetReason("looking for checkpoints to resume from in " + model_dir_);
    ASSIGN_OR_RETURN(start, FindStartPoint());
    SetReason(absl::StrCat("creating variables on ", num_ps, " parameter servers"));
    RETURN_IF_ERROR(WaitForChange(absl::InfinitePast()));
    RETURN_IF_ERROR(CreateVariables(*parts, *layout_));
    if (!start.checkpoint_dir.empty()) {
      SetReason("restoring " + start.checkpoint_dir);
      RETURN_IF_ERROR(WaitForChange(absl::InfinitePast()));
      RETURN_IF_ERROR(checkpointer_->Restore(start.checkpoint_dir, start.manifest));
      CheckQueueWrite("the resume point",
                      context_.jobs->UpdateStatus(job_id_, [&](JobStatus& status) {
                        status.set_resumed_from(start.checkpoint_dir);
                        status.set_resumed_from_step(start.warm_start ? 0 : start.step);
                      }));
      LOG(INFO) << "job " << job_id_ << ": restored " << start.checkpoint_dir
                << (start.warm_start ? " (warm start: variables only)"
                                     : absl::StrCat(" at step ", start.step));
    }
    RETURN_IF_ERROR(CreateLedgers(start, *plan, *parts));
    AnnounceExistingCheckpoints();
    parts->train_summaries = OpenTrainSummaries();
  }
  {
    absl::MutexLock lock(&mu_);
    MoveTo(JobPhase::kTraining);
    parts_ = parts;
    // A stop that came while the job was starting is decided now.
    if (stop_requested_) {
      parts->stop->Decide(STOP_REASON_USER, "stopped by a user", start.step);
    } else if (trains_ && !start.warm_start) {
      // A job resumed from a checkpoint that already meets its step limit
      // (the same spec submitted again) ends now instead of training on.
      parts->stop->OnProgress(start.step, std::nullopt);
    }
  }
  SetReason("");
  // Last: a member that has its assignment may call at once.
  PublishAssignments(*parts, layout_.has_value() ? &*layout_ : nullptr, start);
  return absl::OkStatus();
}

absl::Status JobRunner::ConnectShards(int num_ps) {
  std::vector<ShardGroup::Shard> shards;
  std::vector<uint64_t> incarnations;
  for (int i = 0; i < num_ps; ++i) {
    ShardGroup::Shard shard;
    shard.task = Task(TASK_TYPE_PS, i);
    ASSIGN_OR_RETURN(const Member member, context_.members->Get(shard.task));
    shard.address = member.address();
    shard.client = context_.shard_clients(shard.address);
    shards.push_back(std::move(shard));
    incarnations.push_back(member.incarnation());
  }
  generation_ = NextGeneration();
  absl::MutexLock lock(&mu_);
  shards_ = std::make_shared<ShardGroup>(std::move(shards));
  shard_incarnations_ = std::move(incarnations);
  // An abort that came first had nothing to cancel yet: cancel now.
  if (abort_reason_.has_value()) shards_->CancelAll();
  return absl::OkStatus();
}

std::unique_ptr<TrainSummaries> JobRunner::OpenTrainSummaries() {
  absl::StatusOr<LearningRate> learning_rate = LearningRate::Create(spec_.optimizer());
  absl::StatusOr<std::unique_ptr<FileSummaryWriter>> writer =
      FileSummaryWriter::Open(context_.env, TrainSummaryDir(model_dir_));
  if (!learning_rate.ok() || !writer.ok()) {
    // Plots are worth less than the training: go on without them.
    LOG(WARNING) << "job " << job_id_ << ": no training summaries: "
                 << (learning_rate.ok() ? writer.status() : learning_rate.status());
    return nullptr;
  }
  return std::make_unique<TrainSummaries>(*std::move(writer), *std::move(learning_rate),
                                          StepsPerLoopOf(spec_.training()), clock_);
}

absl::StatusOr<JobRunner::StartPoint> JobRunner::FindStartPoint() {
  Env& env = *context_.env;
  absl::StatusOr<std::vector<std::string>> collected = CollectAbandonedCheckpoints(env, model_dir_);
  if (!collected.ok()) {
    return absl::Status(collected.status().code(),
                        absl::StrCat("checkpoint.model_dir: ", collected.status().message()));
  }
  for (const std::string& path : *collected) {
    LOG(INFO) << "job " << job_id_ << ": removed the unfinished " << path;
  }
  absl::StatusOr<RestorableCheckpointSearch> search = FindRestorableCheckpoint(env, model_dir_);
  if (!search.ok()) {
    return absl::Status(search.status().code(),
                        absl::StrCat("cannot read the checkpoints of checkpoint.model_dir: ",
                                     search.status().message()));
  }
  for (const SkippedCheckpoint& skipped : search->skipped) {
    LOG(WARNING) << "job " << job_id_ << ": not resuming from " << skipped.path << ": "
                 << skipped.reason.message();
    // Training will reach this step again and must be able to save it.
    RETURN_IF_ERROR(SetAside(skipped.path));
  }
  StartPoint start;
  if (search->checkpoint.has_value()) {
    start.step = search->checkpoint->step;
    start.checkpoint_dir = search->checkpoint->path;
    start.manifest = search->checkpoint->manifest;
    LOG(INFO) << "job " << job_id_ << ": resuming from " << start.checkpoint_dir;
    return start;
  }
  const std::string& warm = spec_.checkpoint().warm_start_from();
  if (!warm.empty()) {
    absl::StatusOr<CheckpointManifest> manifest = VerifyCheckpoint(env, warm);
    if (!manifest.ok()) {
      return absl::Status(manifest.status().code(), absl::StrCat("checkpoint.warm_start_from: ",
                                                                 manifest.status().message()));
    }
    start.checkpoint_dir = warm;
    start.manifest = *std::move(manifest);
    start.warm_start = true;
  }
  return start;
}

absl::Status JobRunner::SetAside(const std::string& checkpoint_dir) {
  Env& env = *context_.env;
  for (int attempt = 1; attempt <= 100; ++attempt) {
    const std::string target =
        absl::StrCat(checkpoint_dir, ".damaged", attempt > 1 ? absl::StrCat("-", attempt) : "");
    absl::StatusOr<bool> taken = PathExists(env, target);
    if (!taken.ok()) return taken.status();
    if (*taken) continue;
    if (absl::Status moved = env.Rename(checkpoint_dir, target); !moved.ok()) {
      return absl::Status(moved.code(),
                          absl::StrCat("cannot move the damaged ", checkpoint_dir,
                                       " aside: ", moved.message(), "; remove it by hand"));
    }
    LOG(WARNING) << "job " << job_id_ << ": moved the damaged " << checkpoint_dir << " to "
                 << target;
    return absl::OkStatus();
  }
  return absl::AlreadyExistsError(
      absl::StrCat("too many damaged copies of ", checkpoint_dir, "; remove them by hand"));
}

void JobRunner::AnnounceExistingCheckpoints() {
  absl::StatusOr<std::vector<CheckpointRef>> existing = ListCheckpoints(*context_.env, model_dir_);
  if (!existing.ok()) {
    LOG(WARNING) << "job " << job_id_ << ": cannot list " << model_dir_ << ": "
                 << existing.status();
    return;
  }
  for (const CheckpointRef& ref : *existing) {
    absl::StatusOr<CheckpointManifest> manifest = ReadManifest(*context_.env, ref.path);
    if (!manifest.ok()) continue;  // damaged: FindStartPoint said why
    CheckpointInfo info = CheckpointInfoFromManifest(ref.path, *manifest);
    // The final checkpoint of an earlier run is not this run's end: an
    // evaluator told "final" here would stop following the job and the
    // real final checkpoint would wait for its evaluation forever.
    info.set_final(false);
    feed_->Add(info);
  }
  RefreshCheckpointsInStatus();
  ApplyRetention();
}

absl::Status JobRunner::CreateVariables(const JobParts& parts, const VariableLayout& layout) {
  return Shards()->ForEach([&](int i, ShardClient& client) -> absl::Status {
    CreateVariablesRequest request;
    request.set_job_id(job_id_);
    request.set_shard_index(i);
    request.set_num_shards(parts.num_ps);
    for (const VariableSpec& v : layout.shard_variables[i]) *request.add_variables() = v;
    *request.mutable_optimizer() = spec_.optimizer();
    *request.mutable_training() = spec_.training();
    request.set_num_workers(parts.num_workers);
    request.set_generation(generation_);
    return client.CreateVariables(request).status();
  });
}

absl::Status JobRunner::CreateLedgers(const StartPoint& start, const JobPlan& plan,
                                      JobParts& parts) {
  DataLeaseOptions data;
  data.num_records = plan.num_records;
  data.chunk_size =
      options_.records_per_lease > 0
          ? options_.records_per_lease
          : LeaseSizeFor(plan.num_records, parts.num_workers, plan.records_per_window);
  data.epochs = spec_.train_data().epochs();
  data.lease_timeout = options_.lease_timeout;
  if (DealsLeasesToSyncSlots(parts)) {
    data.sync_slots = parts.num_workers;
    data.records_per_batch = BatchSizeOf(spec_.train_data());
  }
  absl::StatusOr<std::unique_ptr<DataLeaseManager>> leases = DataLeaseManager::Create(clock_, data);
  if (!leases.ok()) {
    return absl::Status(leases.status().code(),
                        absl::StrCat("train_data: ", leases.status().message()));
  }
  parts.data = *std::move(leases);
  const int64_t step = start.warm_start ? 0 : start.step;
  if (!start.checkpoint_dir.empty() && !start.warm_start) {
    if (absl::Status s = parts.data->RestoreFrom(start.manifest.data_position(), start.step);
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("cannot resume the data position of ",
                                                 start.checkpoint_dir, ": ", s.message()));
    }
  }
  parts.step = std::make_unique<GlobalStep>(step);
  schedule_ = std::make_unique<CheckpointSchedule>(spec_.checkpoint(), clock_, step);
  if (step > 0) {
    CheckQueueWrite("the resumed step", context_.jobs->RecordProgress(job_id_, step, 0, 0));
  }
  return absl::OkStatus();
}

void JobRunner::PublishAssignments(const JobParts& parts, const VariableLayout* layout,
                                   const StartPoint& start) {
  Assignment base;
  base.set_job_id(job_id_);
  *base.mutable_spec() = spec_;
  if (std::shared_ptr<ShardGroup> shards = Shards(); shards != nullptr) {
    for (const std::string& address : shards->addresses()) base.add_ps_addresses(address);
  }
  if (layout != nullptr) {
    for (const VariablePlacement& p : layout->placements) *base.add_placements() = p;
  }
  base.set_restore_checkpoint(start.checkpoint_dir);
  base.set_global_step(start.warm_start ? 0 : start.step);
  base.set_num_workers(parts.num_workers);

  std::vector<std::pair<TaskId, Assignment>> assignments;
  for (int i = 0; i < parts.num_ps; ++i) assignments.emplace_back(Task(TASK_TYPE_PS, i), base);
  for (int i = 0; i < parts.num_workers; ++i) {
    Assignment worker = base;
    worker.set_worker_rank(i);
    worker.set_generation(generation_);
    assignments.emplace_back(Task(TASK_TYPE_WORKER, i), std::move(worker));
  }
  if (evaluates_) assignments.emplace_back(Task(TASK_TYPE_EVALUATOR, 0), base);
  for (auto& [task, assignment] : assignments) {
    absl::StatusOr<Member> member = context_.members->Get(task);
    if (member.ok() && IsLive(member->state())) {
      // Refused only for an incarnation lost or replaced meanwhile, whose
      // successor takes the job up from its assignment.
      context_.members->SetJob(task, member->incarnation(), job_id_).IgnoreError();
    }
    context_.assignments->Set(task, std::move(assignment));
  }
}

absl::Status JobRunner::Train() {
  const JobParts& parts = Parts();
  for (;;) {
    absl::Time deadline = clock_.Now() + options_.poll_interval;
    deadline = std::min(deadline, schedule_->NextDueTime());
    absl::Status interrupted = WaitForChange(deadline);
    if (absl::IsAborted(interrupted)) return interrupted;
    std::optional<std::string> shard_lost;
    {
      absl::MutexLock lock(&mu_);
      if (failure_.has_value()) return *failure_;
      shard_lost = shard_lost_;
    }
    if (shard_lost.has_value()) {
      RETURN_IF_ERROR(RollBack(*shard_lost));
      continue;
    }
    const int64_t step = parts.step->value();
    std::optional<StopDecision> decision = parts.stop->CheckTime(step);
    if (!decision.has_value()) decision = CheckEndOfData(parts, step);
    if (absl::IsCancelled(interrupted)) {
      decision = parts.stop->Decide(STOP_REASON_USER, "stopped by a user", step);
    }
    if (!decision.has_value()) decision = MaybeCheckpoint(parts, step);
    if (decision.has_value()) {
      LOG(INFO) << "job " << job_id_ << " stops: " << decision->message;
      return absl::OkStatus();
    }
    ApplyRetention();
  }
}

std::optional<StopDecision> JobRunner::CheckEndOfData(const JobParts& parts, int64_t step) {
  const int epochs = spec_.train_data().epochs();
  const std::string epochs_text = absl::StrCat(epochs, epochs == 1 ? " epoch" : " epochs");
  if (parts.data->end_of_data()) {
    return parts.stop->Decide(STOP_REASON_END_OF_DATA,
                              absl::StrCat("trained on every record of ", epochs_text), step);
  }
  if (std::optional<int64_t> end = parts.data->sync_rounds_end(); end.has_value() && step >= *end) {
    return parts.stop->Decide(
        STOP_REASON_END_OF_DATA,
        absl::StrCat("trained every sync round that ", epochs_text,
                     " fills: a round takes a batch from each worker, and a worker's "
                     "share of the last epoch had no batch left for round ",
                     *end, "; the records still leased to others stay untrained"),
        step);
  }
  return parts.stop->decision();
}

std::optional<StopDecision> JobRunner::MaybeCheckpoint(const JobParts& parts, int64_t step) {
  if (schedule_->Due(step) == CheckpointTrigger::kNone) return std::nullopt;
  if (TakeCheckpoint(step, /*final=*/false).ok()) return std::nullopt;
  schedule_->RecordFailed(step);
  std::optional<std::string> too_many = checkpoint_failures_.TooMany();
  if (!too_many.has_value()) return std::nullopt;
  return parts.stop->Decide(STOP_REASON_CHECKPOINT_FAILURES, *std::move(too_many), step);
}

JobRunner::Outcome JobRunner::Finish() {
  // Null when a stop came while the job was starting.
  const std::shared_ptr<const JobParts> parts = StartedParts();
  std::optional<StopDecision> decision = parts != nullptr ? parts->stop->decision() : std::nullopt;
  bool immediately;
  {
    absl::MutexLock lock(&mu_);
    MoveTo(JobPhase::kFinishing);
    immediately = immediately_;
    if (!decision.has_value() && stop_requested_) {
      decision = StopDecision{STOP_REASON_USER, "stopped by a user", 0};
    }
  }
  if (!decision.has_value()) {
    // An evaluation-only job that did what it was for.
    decision = StopDecision{STOP_REASON_UNSPECIFIED, "done", 0};
  }
  absl::StatusOr<JobStatus> status = context_.jobs->Get(job_id_);
  if (status.ok() && status->state() == JOB_STATE_RUNNING) {
    CheckQueueWrite(
        "the stop",
        context_.jobs->BeginFinishing(job_id_, decision->reason, decision->message).status());
    PublishStatus();
  }
  status = context_.jobs->Get(job_id_);
  const StopReason reason = status.ok() ? status->stop_reason() : decision->reason;
  std::string message = status.ok() ? status->reason() : decision->message;

  // Training had started (the ledgers exist) and did not diverge: a
  // checkpoint of NaN weights would only poison a resume. Nor did
  // checkpoints fail: the final one would fail as they did.
  if (parts != nullptr && parts->step != nullptr && !immediately &&
      reason != STOP_REASON_NAN_LOSS && reason != STOP_REASON_CHECKPOINT_FAILURES) {
    DrainWorkers();
    if (absl::Status saved = FinalCheckpoint(); !saved.ok()) {
      return {JOB_STATE_FAILED, absl::StrCat(message, "; then the final checkpoint failed: ",
                                             saved.message(), ResumeHint())};
    }
  }
  if (evaluates_ && !immediately && final_step_.has_value()) {
    if (absl::Status evaluated = WaitForEvaluation(*final_step_); !evaluated.ok()) {
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
  if (state == JOB_STATE_FAILED) absl::StrAppend(&message, ResumeHint());
  if (state == JOB_STATE_STOPPED && trains_) absl::StrAppend(&message, ResumeHint());
  return {state, message};
}

void JobRunner::DrainWorkers() {
  WaitTracker tracker(
      clock_, "workers to stop", clock_.Now() + options_.stop_drain_timeout, options_.wait_reports,
      [this](const std::string& message) { LOG(WARNING) << "job " << job_id_ << ": " << message; });
  for (;;) {
    std::vector<TaskId> pending;
    {
      absl::MutexLock lock(&mu_);
      for (int i = 0; i < parts_->num_workers; ++i) {
        if (stop_heard_.count(i) == 0) pending.push_back(Task(TASK_TYPE_WORKER, i));
      }
    }
    // A worker that is gone will not report; its leases went back already.
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [&](const TaskId& task) {
                                   absl::StatusOr<Member> m = context_.members->Get(task);
                                   return !m.ok() || !IsLive(m->state());
                                 }),
                  pending.end());
    if (pending.empty()) return;
    tracker.SetWhat(TaskList(pending) + " to hear the stop");
    SetWaitReason("", tracker);
    if (absl::Status expired = tracker.Check(); !expired.ok()) {
      LOG(WARNING) << "job " << job_id_
                   << ": taking the final checkpoint anyway: " << expired.message();
      return;
    }
    absl::Status interrupted = WaitForChange(clock_.Now() + options_.poll_interval);
    if (absl::IsAborted(interrupted)) return;
  }
}

absl::Status JobRunner::FinalCheckpoint() {
  const int64_t step = Parts().step->value();
  SetReason(absl::StrCat("saving the final checkpoint at step ", step));
  for (const CheckpointInfo& info : feed_->List()) {
    if (info.step() != step) continue;
    // Nothing was applied since this checkpoint: it holds the final
    // parameters. Rewrite it with a MANIFEST marked final unless an
    // evaluator holds it, in which case it is announced as final as it is.
    if (info.final() || retention_->IsLeased(step)) {
      feed_->MarkFinal(step);
      final_step_ = step;
      MarkShardsDone();
      RefreshCheckpointsInStatus();
      return absl::OkStatus();
    }
    if (absl::Status deleted = checkpointer_->Delete(step); !deleted.ok()) {
      LOG(WARNING) << "job " << job_id_ << ": " << deleted << "; announcing ckpt-" << step
                   << " as the final checkpoint as it is";
      feed_->MarkFinal(step);
      final_step_ = step;
      MarkShardsDone();
      RefreshCheckpointsInStatus();
      return absl::OkStatus();
    }
    feed_->Remove(step);
  }
  ASSIGN_OR_RETURN(CheckpointInfo info, TakeCheckpoint(step, /*final=*/true));
  final_step_ = info.step();
  MarkShardsDone();
  return absl::OkStatus();
}

absl::StatusOr<CheckpointInfo> JobRunner::TakeCheckpoint(int64_t step, bool final) {
  const absl::Time start = clock_.Now();
  absl::StatusOr<CheckpointManifest> manifest =
      checkpointer_->Take(step, Parts().data->Position(), final);
  if (!manifest.ok()) {
    PublishCheckpointFailure(step, final, manifest.status());
    return manifest.status();
  }
  const absl::Time end = clock_.Now();
  CheckpointInfo info = CheckpointInfoFromManifest(CheckpointDir(model_dir_, step), *manifest);
  schedule_->RecordSaved(step, final);
  checkpoint_failures_.RecordSaved();
  feed_->Add(info);
  if (context_.metrics != nullptr)
    context_.metrics->RecordCheckpoint(end - start, info.bytes(), end);
  LOG(INFO) << "job " << job_id_ << ": saved " << info.path() << (final ? " (final)" : "") << ", "
            << info.bytes() << " bytes in " << absl::FormatDuration(end - start);
  RefreshCheckpointsInStatus();
  JobEvent event;
  *event.mutable_checkpoint() = info;
  Publish(std::move(event));
  return info;
}

void JobRunner::ApplyRetention() {
  if (checkpointer_ == nullptr) return;
  std::vector<int64_t> steps;
  for (const CheckpointInfo& info : feed_->List()) steps.push_back(info.step());
  const std::vector<int64_t> doomed = retention_->ToDelete(steps);
  if (doomed.empty()) return;
  for (int64_t step : doomed) {
    absl::Status deleted = checkpointer_->Delete(step);
    if (!deleted.ok() && !absl::IsNotFound(deleted)) {
      LOG(WARNING) << "job " << job_id_ << ": max_to_keep: " << deleted;
      continue;
    }
    feed_->Remove(step);
    bool unseen;
    {
      absl::MutexLock lock(&mu_);
      evaluations_.erase(step);
      unseen = evaluates_ && accounted_.count(step) == 0;
    }
    // Checkpoints come faster than the evaluator takes them up (it may
    // still be loading its data): say what became of this one.
    if (unseen) {
      PublishSkipped(step, "removed by checkpoint.max_to_keep before the evaluator took it up");
    }
  }
  RefreshCheckpointsInStatus();
}

void JobRunner::MoveTo(JobPhase next) {
  if (!CanMove(phase_, next)) {
    LOG(DFATAL) << "job " << job_id_ << ": no move from " << JobPhaseName(phase_) << " to "
                << JobPhaseName(next);
  }
  VLOG(1) << "job " << job_id_ << ": " << JobPhaseName(phase_) << " -> " << JobPhaseName(next);
  phase_ = next;
}

void JobRunner::Cleanup() {
  bool aborted;
  {
    absl::MutexLock lock(&mu_);
    MoveTo(JobPhase::kEnded);
    aborted = abort_reason_.has_value();
  }
  ApplyRetention();
  feed_->Close();
  const std::shared_ptr<const JobParts> parts = StartedParts();
  if (parts != nullptr && parts->train_summaries != nullptr) {
    absl::Status closed = parts->train_summaries->Close(parts->step->value());
    if (!closed.ok()) LOG(WARNING) << "job " << job_id_ << ": training summaries: " << closed;
  }
  context_.assignments->ClearJob(job_id_);
  for (const Member& member : context_.members->Members()) {
    if (member.job_id() == job_id_) {
      // Refused only for an incarnation replaced meanwhile: nothing to clear.
      context_.members->SetJob(member.task(), member.incarnation(), "").IgnoreError();
    }
  }
  const std::shared_ptr<ShardGroup> shards = Shards();
  if (shards != nullptr && !aborted) {
    DropJobRequest request;
    request.set_job_id(job_id_);
    absl::Status dropped = shards->ForEach([&](int i, ShardClient& client) -> absl::Status {
      // A shard that is gone holds nothing to drop; calling it would only
      // wait out the retries.
      absl::StatusOr<Member> member = context_.members->Get(shards->shard(i).task);
      if (!member.ok() || !IsLive(member->state())) return absl::OkStatus();
      return client.DropJob(request);
    });
    if (!dropped.ok()) {
      LOG(WARNING) << "job " << job_id_ << ": dropping it from the parameter servers: " << dropped;
    }
  }
  if (context_.metrics != nullptr) {
    context_.metrics->SetTraining(0, 0);
    context_.metrics->SetDataLeasesOutstanding(0);
  }
}

// --------------------------------------------------------------- helpers --

absl::Status JobRunner::Interruption() const {
  if (abort_reason_.has_value()) return absl::AbortedError(*abort_reason_);
  if (stop_requested_) return absl::CancelledError("stopped by a user");
  return absl::OkStatus();
}

absl::Status JobRunner::WaitForChange(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto changed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return poked_ || stop_requested_ || abort_reason_.has_value();
  };
  clock_.AwaitWithDeadline(&mu_, absl::Condition(&changed), deadline);
  poked_ = false;
  return Interruption();
}

void JobRunner::MarkShardsDone() {
  absl::MutexLock lock(&mu_);
  shards_done_ = true;
}

void JobRunner::Poke() {
  absl::MutexLock lock(&mu_);
  poked_ = true;
}

bool JobRunner::DealsLeasesToSyncSlots(const JobParts& parts) const {
  return RoundsHaveWorkerSlots(spec_.training(), parts.num_workers);
}

bool JobRunner::IsJobWorker(const JobParts& parts, const TaskId& task) {
  return task.type() == TASK_TYPE_WORKER && task.index() >= 0 && task.index() < parts.num_workers;
}

absl::StatusOr<std::shared_ptr<const JobParts>> JobRunner::AdmitCall(JobCall call) const {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(Admit(phase_, call, job_id_));
  return parts_;
}

std::shared_ptr<const JobParts> JobRunner::StartedParts() const {
  absl::MutexLock lock(&mu_);
  return parts_;
}

const JobParts& JobRunner::Parts() const {
  absl::MutexLock lock(&mu_);
  CHECK(parts_ != nullptr) << "job " << job_id_ << ": its parts are read before Prepare made them";
  return *parts_;
}

std::shared_ptr<ShardGroup> JobRunner::Shards() const {
  absl::MutexLock lock(&mu_);
  return shards_;
}

}  // namespace coordinator
}  // namespace pstrain
