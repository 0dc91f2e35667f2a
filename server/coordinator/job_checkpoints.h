#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_CHECKPOINTS_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_CHECKPOINTS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "common/clock/clock.h"
#include "common/job/checkpoint_failures.h"
#include "common/job/checkpoint_schedule.h"
#include "common/job/retention_policy.h"
#include "protos/job.pb.h"
#include "server/coordinator/checkpoint_feed.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/data_lease_manager.h"
#include "server/coordinator/evaluation_ledger.h"
#include "server/coordinator/global_step.h"
#include "server/coordinator/job_checkpointer.h"
#include "server/coordinator/job_status_publisher.h"
#include "server/coordinator/shard_group.h"
#include "server/coordinator/snapshot_hold.h"
#include "server/coordinator/start_point.h"

namespace pstrain {
namespace coordinator {

// One job's checkpoints in model_dir: the feed evaluators watch, the
// leases they hold (retention keeps what is leased), the schedule that
// says when one is due, the failures in a row that end the job, and the
// final checkpoint. Each saved or failed checkpoint reaches the job's
// status, events and metrics. Thread-safe; taking, restoring and deleting
// checkpoints is for the job's Run thread.
class JobCheckpoints {
 public:
  // `status` and `evaluations` are borrowed and outlive it; `metrics` may
  // be null.
  JobCheckpoints(std::string job_id, const JobSpec& spec, Env& env, Clock& clock,
                 JobStatusPublisher& status, EvaluationLedger& evaluations,
                 CoordinatorMetrics* metrics);

  JobCheckpoints(const JobCheckpoints&) = delete;
  JobCheckpoints& operator=(const JobCheckpoints&) = delete;

  const std::shared_ptr<CheckpointFeed>& feed() const { return feed_; }
  const std::shared_ptr<RetentionPolicy>& retention() const { return retention_; }

  // ---- A training job's.

  // Checkpoints are saved from and restored to `shards`, holding `hold`
  // (may be null) while the shards snapshot (both borrowed; outlive this).
  // Once, before any of the calls below.
  void Attach(const ShardGroup& shards, SnapshotHold* hold = nullptr);
  // Restores the shards from `start`'s checkpoint; nothing for fresh
  // variables.
  absl::Status Restore(const StartPoint& start);
  // Training starts (again) at `step`: the schedule counts from there.
  void StartScheduleAt(int64_t step);
  // When a checkpoint by seconds next falls due.
  absl::Time NextDueTime() const;
  // Takes a periodic checkpoint when one is due at the global step `step`,
  // with the position of `data` (read before the shards snapshot), and
  // raises `step` to the step the checkpoint holds (JobCheckpointer::Take).
  // Returns why the job must stop once checkpoints failed too often in a
  // row.
  std::optional<std::string> TakeIfDue(GlobalStep& step, const DataLeaseManager& data);
  // A checkpoint now, outside the schedule (a job about to deal its sync
  // slots again restores from it), at `step` raised as TakeIfDue does;
  // nothing when one at `step` exists. A failure is recorded as a periodic
  // one's.
  absl::Status TakeNow(GlobalStep& step, const DataLeaseManager& data);
  // The final checkpoint, at the global step `step` or, when a worker's
  // last pushes were not reported, at the step the shards hold (`step` is
  // raised to it). A checkpoint already at `step` holds the final
  // parameters (nothing was applied since): it is rewritten with a
  // MANIFEST marked final, or announced final as it is while an evaluator
  // holds it or it cannot be deleted.
  absl::Status TakeFinal(GlobalStep& step, const DataLeaseManager& data);
  // Lists what model_dir holds when training starts, none of it final (the
  // final checkpoint of an earlier run is not this run's end).
  void AnnounceExisting();

  // ---- An evaluation-only job's.

  // `info`, found in model_dir, is the one checkpoint this job evaluates.
  void AddOnlyCheckpoint(CheckpointInfo info);
  // Lists model_dir again for checkpoints that appeared since.
  void LookForNew();

  // The final checkpoint's step, once saved or chosen.
  std::optional<int64_t> final_step() const;
  // Whether the checkpoint at `step` is marked final.
  bool IsFinal(int64_t step) const;
  // Deletes what max_to_keep lets go and no evaluator holds; a deleted
  // checkpoint the evaluator never took up is reported skipped.
  void ApplyRetention();
  // Copies the checkpoints, with their metrics, into the job's status.
  void RefreshStatus();
  // "; submit the job again ... to resume from ckpt-N" for a training
  // job's end message; empty for other jobs.
  std::string ResumeHint() const;
  // The job ended: watchers end once they have read what remains.
  void Close();

 private:
  absl::StatusOr<CheckpointInfo> Take(GlobalStep& step, const DataLeaseManager& data,
                                      CheckpointKind kind);
  // Announces the checkpoint at `step` as the final one.
  void MarkFinal(int64_t step);
  void RecordFailure(int64_t step, CheckpointKind kind, const absl::Status& error);
  // Set once by Attach, never reset; null for jobs that do not train.
  JobCheckpointer* checkpointer() const;
  std::shared_ptr<CheckpointSchedule> schedule() const;

  const std::string job_id_;
  const std::string model_dir_;
  const JobSpec& spec_;
  const bool trains_;
  Env& env_;
  Clock& clock_;
  JobStatusPublisher& status_;
  EvaluationLedger& evaluations_;
  CoordinatorMetrics* const metrics_;
  const std::shared_ptr<CheckpointFeed> feed_;
  const std::shared_ptr<RetentionPolicy> retention_;

  mutable absl::Mutex mu_;
  std::unique_ptr<JobCheckpointer> checkpointer_ ABSL_GUARDED_BY(mu_);
  // A rollback replaces it.
  std::shared_ptr<CheckpointSchedule> schedule_ ABSL_GUARDED_BY(mu_);
  CheckpointFailures failures_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> final_step_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_CHECKPOINTS_H_
