#include "server/coordinator/coordinator_metrics.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "common/config/tf_config.h"
#include "server/coordinator/job_queue.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

constexpr TaskType kRoles[] = {TASK_TYPE_PS, TASK_TYPE_WORKER, TASK_TYPE_EVALUATOR};
constexpr MemberState kMemberStates[] = {MEMBER_STATE_IDLE, MEMBER_STATE_BUSY, MEMBER_STATE_LOST,
                                         MEMBER_STATE_LEFT};
constexpr JobState kJobStates[] = {JOB_STATE_QUEUED,    JOB_STATE_RUNNING, JOB_STATE_FINISHING,
                                   JOB_STATE_SUCCEEDED, JOB_STATE_FAILED,  JOB_STATE_STOPPED};

std::string MemberStateLabel(MemberState state) {
  std::string name = MemberState_Name(state);
  constexpr absl::string_view kPrefix = "MEMBER_STATE_";
  if (name.rfind(std::string(kPrefix), 0) == 0) name = name.substr(kPrefix.size());
  return absl::AsciiStrToLower(name);
}

std::string JobStateLabel(JobState state) { return absl::AsciiStrToLower(JobStateName(state)); }

std::string StopReasonLabel(StopReason reason) {
  std::string name = StopReason_Name(reason);
  constexpr absl::string_view kPrefix = "STOP_REASON_";
  if (name.rfind(std::string(kPrefix), 0) == 0) name = name.substr(kPrefix.size());
  return absl::AsciiStrToLower(name);
}

// 10 ms .. ~20 min, doubling: small models save in milliseconds, large
// embedding tables in minutes.
Histogram::BucketBoundaries CheckpointBuckets() {
  Histogram::BucketBoundaries b;
  for (double s = 0.01; s < 1500; s *= 2) b.push_back(s);
  return b;
}

}  // namespace

CoordinatorMetrics::CoordinatorMetrics(prometheus::Registry& registry)
    : global_step_(BuildGauge()
                       .Name("pstrain_coordinator_global_step")
                       .Help("Global step of the running job (applied updates).")
                       .Register(registry)
                       .Add({})),
      examples_per_sec_(BuildGauge()
                            .Name("pstrain_coordinator_examples_per_second")
                            .Help("Training examples per second over every worker of the running "
                                  "job, as last reported.")
                            .Register(registry)
                            .Add({})),
      jobs_(BuildGauge()
                .Name("pstrain_coordinator_jobs")
                .Help("Jobs known to the coordinator (queued, running and in the history) by "
                      "state.")
                .Register(registry)),
      queued_jobs_(BuildGauge()
                       .Name("pstrain_coordinator_queued_jobs")
                       .Help("Jobs waiting to run.")
                       .Register(registry)
                       .Add({})),
      members_(BuildGauge()
                   .Name("pstrain_coordinator_members")
                   .Help("Registered cluster members by role and state.")
                   .Register(registry)),
      heartbeat_age_(BuildGauge()
                         .Name("pstrain_coordinator_heartbeat_age_seconds")
                         .Help("Seconds since each member's last heartbeat.")
                         .Register(registry)),
      lost_members_(BuildCounter()
                        .Name("pstrain_coordinator_lost_members_total")
                        .Help("Members marked lost after missing their heartbeat deadline.")
                        .Register(registry)
                        .Add({})),
      leases_outstanding_(BuildGauge()
                              .Name("pstrain_coordinator_data_leases_outstanding")
                              .Help("Data leases of the running job held by workers.")
                              .Register(registry)
                              .Add({})),
      leases_requeued_(BuildCounter()
                           .Name("pstrain_coordinator_data_leases_requeued_total")
                           .Help("Data leases that expired or whose holder was lost or "
                                 "restarted; their records went back to the queue.")
                           .Register(registry)
                           .Add({})),
      checkpoints_ok_(BuildCounter()
                          .Name("pstrain_coordinator_checkpoints_total")
                          .Help("Checkpoints attempted, by result.")
                          .Register(registry)
                          .Add({{"result", "ok"}})),
      checkpoints_failed_(BuildCounter()
                              .Name("pstrain_coordinator_checkpoints_total")
                              .Help("Checkpoints attempted, by result.")
                              .Register(registry)
                              .Add({{"result", "failed"}})),
      rollbacks_(BuildCounter()
                     .Name("pstrain_coordinator_rollbacks_total")
                     .Help("Times the running job rolled back to its newest checkpoint "
                           "after losing a parameter server.")
                     .Register(registry)
                     .Add({})),
      rolled_back_steps_(BuildCounter()
                             .Name("pstrain_coordinator_rolled_back_steps_total")
                             .Help("Global steps trained since the checkpoint a rollback went "
                                   "back to: the work those rollbacks cost.")
                             .Register(registry)
                             .Add({})),
      sync_rounds_committed_(BuildCounter()
                                 .Name("pstrain_coordinator_sync_rounds_committed_total")
                                 .Help("Agreed sync rounds committed on every parameter server "
                                       "(sync mode on several shards).")
                                 .Register(registry)
                                 .Add({})),
      late_round_joins_(BuildCounter()
                            .Name("pstrain_coordinator_sync_round_late_joins_total")
                            .Help("Workers' joins of an agreed sync round answered late: the "
                                  "round was full or over, the push was not applied.")
                            .Register(registry)
                            .Add({})),
      checkpoint_seconds_(BuildHistogram()
                              .Name("pstrain_coordinator_checkpoint_duration_seconds")
                              .Help("Time to write a checkpoint: every shard's snapshot and the "
                                    "MANIFEST.")
                              .Register(registry)
                              .Add({}, CheckpointBuckets())),
      checkpoint_bytes_(BuildGauge()
                            .Name("pstrain_coordinator_last_checkpoint_bytes")
                            .Help("Size of the newest checkpoint, every shard file together.")
                            .Register(registry)
                            .Add({})),
      checkpoint_time_(BuildGauge()
                           .Name("pstrain_coordinator_last_checkpoint_timestamp_seconds")
                           .Help("Unix time the newest checkpoint was written; its age is "
                                 "time() minus this.")
                           .Register(registry)
                           .Add({})),
      steps_per_sec_(BuildGauge()
                         .Name("pstrain_coordinator_steps_per_second")
                         .Help("Global steps per second of the running job over the last 10 "
                               "seconds (0 when no job runs).")
                         .Register(registry)
                         .Add({})),
      jobs_ended_(BuildCounter()
                      .Name("pstrain_coordinator_jobs_ended_total")
                      .Help("Jobs that ended, by final state and stop reason.")
                      .Register(registry)),
      last_job_(BuildGauge()
                    .Name("pstrain_coordinator_last_job_info")
                    .Help("Constant 1 for the job that ended last, labelled with its id, final "
                          "state and stop reason.")
                    .Register(registry)),
      last_eval_step_(BuildGauge()
                          .Name("pstrain_coordinator_last_eval_step")
                          .Help("Global step of the checkpoint of the newest evaluation.")
                          .Register(registry)
                          .Add({})),
      last_eval_metric_(BuildGauge()
                            .Name("pstrain_coordinator_last_eval_metric")
                            .Help("Each metric of the newest evaluation of the running or last "
                                  "job, labelled name=<metric> (auc, accuracy, loss, ...).")
                            .Register(registry)) {
  for (TaskType role : kRoles) {
    for (MemberState state : kMemberStates) {
      members_.Add({{"role", std::string(TaskTypeName(role))}, {"state", MemberStateLabel(state)}});
    }
  }
  for (JobState state : kJobStates) jobs_.Add({{"state", JobStateLabel(state)}});
}

void CoordinatorMetrics::SetTraining(int64_t global_step, double examples_per_sec) {
  global_step_.Set(static_cast<double>(global_step));
  examples_per_sec_.Set(examples_per_sec);
}

void CoordinatorMetrics::ObserveGlobalStep(std::optional<int64_t> global_step, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (!global_step.has_value() ||
      (!recent_steps_.empty() && *global_step < recent_steps_.back().second)) {
    recent_steps_.clear();
  }
  if (!global_step.has_value()) {
    steps_per_sec_.Set(0);
    return;
  }
  recent_steps_.emplace_back(now, *global_step);
  // Keep one sample at or beyond the window's start, so the rate spans it.
  while (recent_steps_.size() > 2 && recent_steps_[1].first <= now - kStepRateWindow) {
    recent_steps_.pop_front();
  }
  const auto& [oldest_time, oldest_step] = recent_steps_.front();
  const double seconds = absl::ToDoubleSeconds(now - oldest_time);
  steps_per_sec_.Set(seconds > 0 ? static_cast<double>(*global_step - oldest_step) / seconds : 0);
}

void CoordinatorMetrics::RecordJobEnd(const JobStatus& job) {
  const std::string state = JobStateLabel(job.state());
  const std::string reason = StopReasonLabel(job.stop_reason());
  jobs_ended_.Add({{"state", state}, {"stop_reason", reason}}).Increment();
  absl::MutexLock lock(&mu_);
  if (last_job_series_ != nullptr) last_job_.Remove(last_job_series_);
  last_job_series_ =
      &last_job_.Add({{"job_id", job.job_id()}, {"state", state}, {"stop_reason", reason}});
  last_job_series_->Set(1);
}

void CoordinatorMetrics::RecordEvaluation(int64_t step,
                                          const std::map<std::string, double>& metrics) {
  last_eval_step_.Set(static_cast<double>(step));
  absl::MutexLock lock(&mu_);
  for (auto it = eval_series_.begin(); it != eval_series_.end();) {
    if (metrics.count(it->first) == 0) {
      last_eval_metric_.Remove(it->second);
      it = eval_series_.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [name, value] : metrics) {
    prometheus::Gauge*& series = eval_series_[name];
    if (series == nullptr) series = &last_eval_metric_.Add({{"name", name}});
    series->Set(value);
  }
}

void CoordinatorMetrics::SetJobCounts(const std::map<JobState, int>& counts) {
  for (JobState state : kJobStates) {
    auto it = counts.find(state);
    jobs_.Add({{"state", JobStateLabel(state)}}).Set(it == counts.end() ? 0 : it->second);
  }
}

void CoordinatorMetrics::SetQueuedJobs(int queued) { queued_jobs_.Set(queued); }

void CoordinatorMetrics::SetMembers(const std::vector<Member>& members, absl::Time now) {
  std::map<std::pair<int, int>, int> counts;
  for (const Member& member : members) {
    ++counts[{member.task().type(), member.state()}];
    const double age =
        absl::ToDoubleSeconds(now - absl::FromUnixMillis(member.last_heartbeat_unix_ms()));
    heartbeat_age_.Add({{"task", TaskName(member.task())}}).Set(age < 0 ? 0 : age);
  }
  for (TaskType role : kRoles) {
    for (MemberState state : kMemberStates) {
      auto it = counts.find({role, state});
      members_.Add({{"role", std::string(TaskTypeName(role))}, {"state", MemberStateLabel(state)}})
          .Set(it == counts.end() ? 0 : it->second);
    }
  }
}

void CoordinatorMetrics::AddLostMembers(int lost) { lost_members_.Increment(lost); }

void CoordinatorMetrics::SetDataLeasesOutstanding(int64_t leases) {
  leases_outstanding_.Set(static_cast<double>(leases));
}

void CoordinatorMetrics::AddDataLeasesRequeued(int64_t leases) {
  leases_requeued_.Increment(static_cast<double>(leases));
}

void CoordinatorMetrics::RecordCheckpoint(absl::Duration duration, int64_t bytes, absl::Time when) {
  checkpoints_ok_.Increment();
  checkpoint_seconds_.Observe(absl::ToDoubleSeconds(duration));
  checkpoint_bytes_.Set(static_cast<double>(bytes));
  checkpoint_time_.Set(absl::ToDoubleSeconds(when - absl::UnixEpoch()));
}

void CoordinatorMetrics::RecordCheckpointFailure() { checkpoints_failed_.Increment(); }

void CoordinatorMetrics::RecordRollback(int64_t steps) {
  rollbacks_.Increment();
  rolled_back_steps_.Increment(static_cast<double>(std::max<int64_t>(steps, 0)));
}

void CoordinatorMetrics::AddSyncRoundsCommitted(int64_t rounds) {
  sync_rounds_committed_.Increment(static_cast<double>(rounds));
}

void CoordinatorMetrics::AddLateRoundJoins(int64_t joins) {
  late_round_joins_.Increment(static_cast<double>(joins));
}

}  // namespace coordinator
}  // namespace pstrain
