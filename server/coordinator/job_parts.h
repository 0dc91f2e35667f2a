#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_PARTS_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_PARTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "common/clock/clock.h"
#include "protos/coordinator.pb.h"
#include "protos/job.pb.h"
#include "server/coordinator/assignment_board.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/evaluation_ledger.h"
#include "server/coordinator/job_checkpoints.h"
#include "server/coordinator/job_control.h"
#include "server/coordinator/job_planner.h"
#include "server/coordinator/job_queue.h"
#include "server/coordinator/job_status_publisher.h"
#include "server/coordinator/job_workers.h"
#include "server/coordinator/lease_hand_back.h"
#include "server/coordinator/membership_registry.h"
#include "server/coordinator/round_keeper.h"
#include "server/coordinator/shard_client.h"
#include "server/coordinator/training_generation.h"
#include "server/coordinator/variable_placement.h"
#include "server/coordinator/wait_tracker.h"

namespace pstrain {
namespace coordinator {

struct JobRunnerOptions {
  // Parameter servers and workers a training job runs on: tasks ps/0 ..
  // ps/(num_ps - 1) and likewise for workers. 0 (default): those registered
  // when the job starts (1 + the highest live index, at least 1).
  int num_ps = 0;
  int num_workers = 0;
  // Hot-standby replicas per shard (docs/design/replicas.md): 0 (default)
  // or 1. With 1 a job on S shards runs on tasks ps/0 .. ps/(2S - 1):
  // shard i's primary ps/i and its backup ps/(S + i); num_ps counts shards.
  int ps_replicas = 0;
  // Workers may join a running job up to this many ranks (tasks worker/0
  // .. worker/(max_workers - 1)); the job's parameter servers keep a place
  // for a sync-round push per rank. Default 256. At least the job's start
  // count.
  int max_workers = 256;
  // How long a job waits for its members to register before it fails.
  // Default 10 minutes: room for a cluster that is still starting (pods
  // being scheduled, images pulled) while a misconfigured one fails the job
  // with the names of the tasks it waited for.
  absl::Duration member_wait_timeout = absl::Minutes(10);
  // After a stop decision, how long workers get to hear it (in their next
  // progress report) before the final checkpoint is taken regardless.
  // Default 60 s: a worker reports every steps_per_loop steps.
  absl::Duration stop_drain_timeout = absl::Seconds(60);
  // How long the evaluator may take to report its evaluation of the final
  // checkpoint before the job fails. Default 30 minutes.
  absl::Duration final_eval_timeout = absl::Minutes(30);
  // Hot-standby replicas: how long a backup rebuilt by state transfer may
  // take to catch up with its primary before the rebuild is given up (and
  // tried again). Default 10 minutes: a large shard's state at network
  // speed.
  absl::Duration backup_rebuild_timeout = absl::Minutes(10);
  // The job's loop wakes at least this often to check max_seconds, the
  // checkpoint schedule and what it waits for. Default 1 s.
  absl::Duration poll_interval = absl::Seconds(1);
  // Data leases: records per lease (default 0: LeaseSizeFor the job's data
  // and workers) and how long a worker may hold one (default 5 minutes);
  // see DataLeaseOptions.
  int64_t records_per_lease = 0;
  absl::Duration lease_timeout = absl::Minutes(5);
  // Continuous evaluation: how often model_dir is listed for new
  // checkpoints. Default 10 s.
  absl::Duration model_dir_poll = absl::Seconds(10);
  WaitTrackerOptions wait_reports;
};

// What a job works with. Everything is borrowed and outlives it.
struct JobRunnerContext {
  Clock* clock = nullptr;
  Env* env = nullptr;
  MembershipRegistry* members = nullptr;
  JobQueue* jobs = nullptr;
  AssignmentBoard* assignments = nullptr;
  JobPlanner* planner = nullptr;
  ShardClientFactory shard_clients;
  // May be null.
  CoordinatorMetrics* metrics = nullptr;
  // Receives the job's events for WatchJob; may be empty.
  std::function<void(JobEvent event)> publish;
  // Records the job's status where a restarted coordinator finds it (the
  // journal), after a change it must not forget (a rollback); may be empty.
  std::function<void(const JobStatus& job)> record;
};

// The parts one running job is built from, each with its own lock and
// test: its phase machine and signals (control), its status and events,
// its evaluation ledger, its checkpoints, the training generation on its
// shards, the hand-back of lost workers' leases, the keeper of its
// agreed sync rounds and its workers. JobRunner owns them
// and its phases (job_start.h, job_training.h, job_evaluation.h,
// job_finish.h) drive them; no part knows JobRunner.
struct JobParts {
  // `job` as JobQueue::StartNext returned it.
  JobParts(const JobStatus& job, JobRunnerOptions options, JobRunnerContext context);

  JobParts(const JobParts&) = delete;
  JobParts& operator=(const JobParts&) = delete;

  // Constant.
  const std::string job_id;
  const JobSpec spec;
  const JobRunnerOptions options;
  const JobRunnerContext context;
  Clock& clock;
  const bool trains;
  const bool evaluates;

  // The parts, in the order they are built (later ones borrow earlier).
  JobControl control;
  JobStatusPublisher status;
  EvaluationLedger evaluations;
  JobCheckpoints checkpoints;
  TrainingGeneration generation;
  LeaseHandBack hand_back;
  // Opened by the start phase when the rounds are agreed (RoundsAreAgreed);
  // the checkpoints hold it while the shards snapshot.
  RoundKeeper rounds;
  // The worker ranks of a training job and their assignments; workers
  // join it while it trains.
  JobWorkers workers;

  // Where a training job placed its variables; set by the start phase,
  // then read by the Run thread only (a rollback creates them again).
  std::optional<VariableLayout> layout;

  // Logs `message` about this job at WARNING: the sink of its waits.
  WaitTracker::Sink WarningSink() const;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_PARTS_H_
