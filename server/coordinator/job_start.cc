#include "server/coordinator/job_start.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

// The job's size: 1 + the highest index of a live member of `type`, at
// least 1, unless the options fix it.
int JobSize(const std::vector<Member>& members, TaskType type, int fixed) {
  if (fixed > 0) return fixed;
  int count = 1;
  for (const Member& member : members) {
    if (member.task().type() == type && IsLive(member.state())) {
      count = std::max(count, member.task().index() + 1);
    }
  }
  return count;
}

// The members the job still waits for; sets its size on `job`.
std::vector<TaskId> MissingMembers(const JobParts& parts, StartedJob& job) {
  MembershipRegistry& registry = *parts.context.members;
  std::vector<TaskId> missing;
  if (parts.trains) {
    const std::vector<Member> members = registry.Members();
    // With replicas every shard has its primary and its backup.
    const int per_shard = 1 + parts.options.ps_replicas;
    const int ps_tasks = JobSize(members, TASK_TYPE_PS, parts.options.num_ps * per_shard);
    job.num_ps = (ps_tasks + per_shard - 1) / per_shard;
    job.num_workers = JobSize(members, TASK_TYPE_WORKER, parts.options.num_workers);
    for (const TaskId& task : registry.MissingTasks(TASK_TYPE_PS, job.num_ps * per_shard)) {
      missing.push_back(task);
    }
    for (const TaskId& task : registry.MissingTasks(TASK_TYPE_WORKER, job.num_workers)) {
      missing.push_back(task);
    }
  }
  if (parts.evaluates) {
    for (const TaskId& task : registry.MissingTasks(TASK_TYPE_EVALUATOR, 1)) {
      missing.push_back(task);
    }
  }
  return missing;
}

absl::Status WaitForMembers(JobParts& parts, StartedJob& job) {
  WaitTracker tracker(parts.clock, "members", parts.clock.Now() + parts.options.member_wait_timeout,
                      parts.options.wait_reports, parts.WarningSink());
  for (;;) {
    const std::vector<TaskId> missing = MissingMembers(parts, job);
    if (missing.empty()) return absl::OkStatus();
    tracker.SetWhat(TaskList(missing));
    parts.status.SetWaitReason("", tracker);
    if (absl::Status expired = tracker.Check(); !expired.ok()) {
      return absl::DeadlineExceededError(absl::StrCat(
          expired.message(),
          ": start the missing tasks with --coordinator_address pointing here, or check "
          "their logs for why they cannot register"));
    }
    RETURN_IF_ERROR(parts.control.WaitForChange(parts.clock.Now() + parts.options.poll_interval));
  }
}

// A client for each of the job's parameter servers (with replicas, shard
// i's primary ps/i and backup ps/(num_ps + i)), and the generation they
// start.
absl::Status ConnectShards(JobParts& parts, int num_ps) {
  const int per_shard = 1 + parts.options.ps_replicas;
  std::vector<ShardGroup::Shard> processes;
  std::vector<uint64_t> incarnations;
  for (int i = 0; i < num_ps * per_shard; ++i) {
    ShardGroup::Shard shard;
    shard.task = MakeTask(TASK_TYPE_PS, i);
    ASSIGN_OR_RETURN(const Member member, parts.context.members->Get(shard.task));
    shard.address = member.address();
    shard.client = parts.context.shard_clients(shard.address);
    processes.push_back(std::move(shard));
    incarnations.push_back(member.incarnation());
  }
  std::shared_ptr<ShardGroup> group;
  if (per_shard == 1) {
    group = std::make_shared<ShardGroup>(std::move(processes));
  } else {
    std::vector<ShardGroup::Shard> backups;
    for (int i = num_ps; i < 2 * num_ps; ++i) backups.push_back(std::move(processes[i]));
    processes.resize(num_ps);
    group = std::make_shared<ShardGroup>(std::move(processes), std::move(backups));
  }
  parts.generation.Connect(std::move(group), std::move(incarnations));
  return absl::OkStatus();
}

// model_dir/train: loss, learning rate, examples/s, steps/s. Null when they
// cannot be opened: plots are worth less than the training.
std::unique_ptr<TrainSummaries> OpenTrainSummaries(const JobParts& parts) {
  absl::StatusOr<LearningRate> learning_rate = LearningRate::Create(parts.spec.optimizer());
  absl::StatusOr<std::unique_ptr<FileSummaryWriter>> writer = FileSummaryWriter::Open(
      parts.context.env, TrainSummaryDir(parts.spec.checkpoint().model_dir()));
  if (!learning_rate.ok() || !writer.ok()) {
    LOG(WARNING) << "job " << parts.job_id << ": no training summaries: "
                 << (learning_rate.ok() ? writer.status() : learning_rate.status());
    return nullptr;
  }
  return std::make_unique<TrainSummaries>(*std::move(writer), *std::move(learning_rate),
                                          StepsPerLoopOf(parts.spec.training()), parts.clock);
}

// Sync mode on several shards: the coordinator agrees each round, from the
// job's start step, and its commits are the global step; nobody joins a
// round at or past max_steps, and each commit checks the stop conditions.
void OpenRounds(JobParts& parts, const StartedJob& job, int64_t start_step) {
  if (!RoundsAreAgreed(parts.spec.training(), job.num_ps)) return;
  RoundPlan plan;
  plan.max_workers = job.max_workers;
  plan.members_per_round = ReplicasToAggregateOf(parts.spec.training(), job.num_workers);
  plan.max_steps = parts.spec.stop().max_steps();
  plan.step = job.step.get();
  plan.committed = [stop = job.stop.get()](int64_t step) { stop->OnProgress(step, std::nullopt); };
  LOG(INFO) << "job " << parts.job_id << ": sync rounds of " << plan.members_per_round << " of "
            << job.num_workers << " workers, agreed across " << job.num_ps
            << " parameter servers, from round " << start_step;
  parts.rounds.Open(std::move(plan), start_step);
}

// The data leases and the global step of a training job starting at
// `start`, into `job`.
absl::Status CreateLedgers(JobParts& parts, const StartPoint& start, const JobPlan& plan,
                           StartedJob& job) {
  DataLeaseOptions data;
  data.num_records = plan.num_records;
  data.chunk_size = parts.options.records_per_lease > 0
                        ? parts.options.records_per_lease
                        : LeaseSizeFor(plan.num_records, job.num_workers, plan.records_per_window);
  data.epochs = job.epochs;
  data.lease_timeout = parts.options.lease_timeout;
  if (job.sync_slots) {
    data.sync_slots = job.num_workers;
    data.records_per_batch = BatchSizeOf(parts.spec.train_data());
  }
  absl::StatusOr<std::unique_ptr<DataLeaseManager>> leases =
      DataLeaseManager::Create(parts.clock, data);
  if (!leases.ok()) {
    return absl::Status(leases.status().code(),
                        absl::StrCat("train_data: ", leases.status().message()));
  }
  job.data = *std::move(leases);
  if (start.resumes_data()) {
    if (absl::Status s = job.data->RestoreFrom(start.manifest.data_position(), start.step);
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("cannot resume the data position of ",
                                                 start.checkpoint_dir, ": ", s.message()));
    }
  }
  const int64_t step = start.global_step();
  job.step = std::make_unique<GlobalStep>(step);
  parts.checkpoints.StartScheduleAt(step);
  if (step > 0) parts.status.RestartProgressAt(step);
  OpenRounds(parts, job, step);
  return absl::OkStatus();
}

// A training job's variables, placed, created and restored, and its
// ledgers; returns where it starts.
absl::StatusOr<StartPoint> SetUpTraining(JobParts& parts, const JobPlan& plan, StartedJob& job) {
  ASSIGN_OR_RETURN(parts.layout, PlaceVariables(plan.variables, job.num_ps));
  RETURN_IF_ERROR(ConnectShards(parts, job.num_ps));
  parts.checkpoints.Attach(*parts.generation.shards(), &parts.rounds);
  const std::string& model_dir = parts.spec.checkpoint().model_dir();
  parts.status.SetReason("looking for checkpoints to resume from in " + model_dir);
  ASSIGN_OR_RETURN(const StartPoint start,
                   FindStartPoint(*parts.context.env, parts.spec, parts.job_id));
  parts.status.SetReason(absl::StrCat("creating variables on ", job.num_ps, " parameter servers"));
  RETURN_IF_ERROR(parts.control.WaitForChange(absl::InfinitePast()));
  RETURN_IF_ERROR(CreateVariables(parts, job));
  if (!start.checkpoint_dir.empty()) {
    parts.status.SetReason("restoring " + start.checkpoint_dir);
    RETURN_IF_ERROR(parts.control.WaitForChange(absl::InfinitePast()));
    RETURN_IF_ERROR(parts.checkpoints.Restore(start));
    parts.status.Update("the resume point", [&](JobStatus& status) {
      status.set_resumed_from(start.checkpoint_dir);
      status.set_resumed_from_step(start.global_step());
    });
    LOG(INFO) << "job " << parts.job_id << ": restored " << start.checkpoint_dir
              << (start.warm_start ? " (warm start: variables only)"
                                   : absl::StrCat(" at step ", start.step));
  }
  RETURN_IF_ERROR(CreateLedgers(parts, start, plan, job));
  parts.checkpoints.AnnounceExisting();
  job.train_summaries = OpenTrainSummaries(parts);
  return start;
}

}  // namespace

absl::Status StartJob(JobParts& parts) {
  auto job = std::make_shared<StartedJob>();
  job->epochs = parts.spec.train_data().epochs();
  RETURN_IF_ERROR(WaitForMembers(parts, *job));
  job->sync_slots = parts.trains && RoundsHaveWorkerSlots(parts.spec.training(), job->num_workers);
  job->max_workers = std::max(job->num_workers, parts.options.max_workers);
  parts.workers.Plan(job->num_workers, job->max_workers, !job->sync_slots);
  parts.status.SetReason("planning: reading the data and building the model");
  absl::StatusOr<JobPlan> plan = parts.context.planner->Plan(parts.spec);
  if (!plan.ok()) {
    return absl::Status(plan.status().code(),
                        absl::StrCat("cannot set up the job: ", plan.status().message()));
  }
  LOG(INFO) << "job " << parts.job_id << ": " << plan->description << ", " << plan->variables.size()
            << " variables";
  job->stop = std::make_unique<StopConditions>(parts.spec, parts.clock, parts.clock.Now());
  StartPoint start;
  if (parts.trains) {
    ASSIGN_OR_RETURN(start, SetUpTraining(parts, *plan, *job));
  }
  if (parts.control.Start(job)) {
    // A stop that came while the job was starting is decided now.
    job->stop->Decide(STOP_REASON_USER, "stopped by a user", start.step);
  } else if (parts.trains && !start.warm_start) {
    // A job resumed from a checkpoint that already meets its step limit
    // (the same spec submitted again) ends now instead of training on.
    job->stop->OnProgress(start.step, std::nullopt);
  }
  parts.status.SetReason("");
  PublishAssignments(parts, *job, start);
  return absl::OkStatus();
}

CreateVariablesRequest ShardVariablesRequest(const JobParts& parts, const StartedJob& job,
                                             int shard, const ReplicaSetup& replica) {
  CreateVariablesRequest request;
  request.set_job_id(parts.job_id);
  request.set_shard_index(shard);
  request.set_num_shards(job.num_ps);
  for (const VariableSpec& v : parts.layout->shard_variables[shard]) *request.add_variables() = v;
  *request.mutable_optimizer() = parts.spec.optimizer();
  *request.mutable_training() = parts.spec.training();
  // The workers whose pushes a round the shard decides alone takes:
  // those the job waits for now.
  request.set_num_workers(parts.workers.count());
  request.set_max_workers(job.max_workers);
  request.set_generation(parts.generation.number());
  request.set_rounds_agreed(RoundsAreAgreed(parts.spec.training(), job.num_ps));
  if (replica.role() != REPLICA_ROLE_UNSPECIFIED) *request.mutable_replica() = replica;
  return request;
}

absl::Status CreateVariables(JobParts& parts, const StartedJob& job) {
  return parts.generation.shards()->ForEachReplica(
      [&](int i, const ReplicaSetup& replica, const ShardGroup::Shard& process) {
        return process.client->CreateVariables(ShardVariablesRequest(parts, job, i, replica))
            .status();
      });
}

namespace {

// Hands `base`, with the shards' primaries now, to the job's members.
void Publish(JobParts& parts, const StartedJob& job, Assignment base) {
  base.clear_ps_addresses();
  if (std::shared_ptr<ShardGroup> shards = parts.generation.shards(); shards != nullptr) {
    for (const std::string& address : shards->addresses()) base.add_ps_addresses(address);
    if (shards->replicated()) base.set_replica_epoch(shards->layout_epoch());
  }

  std::vector<TaskId> tasks;
  for (int i = 0; i < job.num_ps * (1 + parts.options.ps_replicas); ++i) {
    tasks.push_back(MakeTask(TASK_TYPE_PS, i));
    parts.context.assignments->Set(tasks.back(), base);
  }
  if (parts.evaluates) {
    tasks.push_back(MakeTask(TASK_TYPE_EVALUATOR, 0));
    parts.context.assignments->Set(tasks.back(), base);
  }
  if (parts.trains) {
    // Every worker present joins, also those past the count the job
    // waited for.
    std::vector<int> present;
    for (const Member& member : parts.context.members->Members()) {
      if (member.task().type() == TASK_TYPE_WORKER && IsLive(member.state())) {
        present.push_back(member.task().index());
      }
    }
    Assignment worker = base;
    worker.set_generation(parts.generation.number());
    for (int rank : parts.workers.Publish(worker, present)) {
      tasks.push_back(MakeTask(TASK_TYPE_WORKER, rank));
    }
  }
  for (const TaskId& task : tasks) {
    absl::StatusOr<Member> member = parts.context.members->Get(task);
    if (member.ok() && IsLive(member->state())) {
      // Refused only for an incarnation lost or replaced meanwhile, whose
      // successor takes the job up from its assignment.
      parts.context.members->SetJob(task, member->incarnation(), parts.job_id).IgnoreError();
    }
  }
}

}  // namespace

void PublishAssignments(JobParts& parts, const StartedJob& job, const StartPoint& start) {
  Assignment base;
  base.set_job_id(parts.job_id);
  *base.mutable_spec() = parts.spec;
  if (parts.layout.has_value()) {
    for (const VariablePlacement& p : parts.layout->placements) *base.add_placements() = p;
  }
  base.set_restore_checkpoint(start.checkpoint_dir);
  base.set_global_step(start.global_step());
  base.set_num_workers(parts.workers.count());
  Publish(parts, job, std::move(base));
}

void RepublishShards(JobParts& parts, const StartedJob& job) {
  Publish(parts, job, parts.context.assignments->Get(MakeTask(TASK_TYPE_PS, 0)));
}

}  // namespace coordinator
}  // namespace pstrain
