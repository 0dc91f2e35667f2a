#include "server/coordinator/coordinator_metrics.h"

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
                           .Help("Unix time the newest checkpoint was written.")
                           .Register(registry)
                           .Add({})) {
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

}  // namespace coordinator
}  // namespace pstrain
