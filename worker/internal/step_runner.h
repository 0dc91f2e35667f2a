#ifndef PSTRAIN_WORKER_INTERNAL_STEP_RUNNER_H_
#define PSTRAIN_WORKER_INTERNAL_STEP_RUNNER_H_

// The compute side of one assignment run: trains a lease step by step (read
// a batch, pull its parameters, compute gradients, push them), lines the
// batches up with the rounds in deterministic sync mode, and books each
// push's outcome, handing the records of refused pushes back.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/model/model.h"
#include "protos/coordinator.pb.h"
#include "worker/internal/lease_feeder.h"
#include "worker/internal/progress_reporter.h"
#include "worker/overlapped_push.h"
#include "worker/ps_client.h"
#include "worker/training_data.h"
#include "worker/worker_metrics.h"

namespace pstrain {
namespace worker {
namespace internal {

struct StepRunnerOptions {
  std::string job_id;
  // The job's update mode is sync: pulls wait for the rounds.
  bool sync = false;
  // Parameter-server shards of the job.
  int num_shards = 0;
  // stop.max_steps of the job; 0: none.
  int64_t max_steps = 0;
  // Sync mode: how long one pull waits for a round before the run reports
  // (to hear a stop) and waits again.
  absl::Duration round_wait = absl::Seconds(2);
  // A pull that waits this long says so, and again this often.
  absl::Duration log_waits_every = absl::Seconds(5);
  // Pull the next batch's parameters while the current gradients are
  // pushed (async modes, and sync rounds a shard decides alone, where the
  // pull waits on the shard for the round the push joins).
  bool overlap_pull_with_push = true;
  // OptimizerSpec.clip_norm: each step's whole gradient is clipped to this
  // global L2 norm before its push. 0: no clipping.
  double clip_norm = 0;
};

// Agreed sync rounds (docs/design/sync_rounds.md): asks the coordinator to
// make `push`, staged on every shard it went to, a member of sync round
// `round`; MEMBER once the round is committed with it, or LATE.
using RoundJoiner = std::function<absl::StatusOr<JoinRoundResponse>(int64_t round,
                                                                  const PushSummary& push)>;

// Not thread-safe: the run's compute thread only.
class StepRunner {
 public:
  // Everything borrowed must outlive the runner; `metrics` may be null.
  // `over` says whether the run is over (the job changed, Stop(), the
  // membership lapsed). `join_round`: null unless the job's sync rounds are
  // agreed (RoundsAreAgreed), when each push joins its round.
  StepRunner(StepRunnerOptions options, Model& model, ParameterServerClient& ps,
             ProgressReporter& reporter, LeaseFeeder& feeder, Clock& clock, WorkerMetrics* metrics,
             std::function<bool()> over, RoundJoiner join_round = nullptr);

  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // Trains `lease` from `reader` until its data ends, training stops or an
  // error. The records that go back with it (those of refused pushes, and
  // the unread rest when training ends early) are added to `returned`.
  absl::Status TrainLease(const DataLease& lease, LeaseBatchReader& reader,
                          std::vector<RecordRange>* returned);

  // The job's max_steps is reached, so this worker's part is done: training
  // ends there rather than when a report's answer says so. Sync mode: the
  // parameters pulled were those after round max_steps on every shard.
  // Async modes: a shard's answer said it had applied max_steps updates,
  // so at most the pushes in flight then (one per worker) go past it, as
  // with TensorFlow's workers, which read the global step every step.
  bool reached_max_steps() const { return reached_max_steps_; }

 private:
  // The lease being trained: its batches, the batch in hand, and the
  // records that go back with it.
  struct LeaseInHand {
    const DataLease& lease;
    LeaseBatchReader& reader;
    std::vector<RecordRange>& returned;
    int64_t batch_index = -1;  // of the batch in hand, within the lease
  };

  // Sync rounds a shard decides alone: waits until the round of the
  // lease's last push is applied, before the lease is completed.
  absl::Status AwaitLastRound(LeaseInHand& hand);
  // One step: reads a batch, pulls its parameters and settles the push
  // overlapped with the pull, then ComputeAndPush. False when the lease's
  // training ends here without an error.
  absl::StatusOr<bool> TrainStep(LeaseInHand& hand);
  // Computes the batch's gradients, clips them and pushes them, unless the
  // loss or the gradients are not finite: then nothing is pushed and the
  // step is reported at once as one of non-finite loss, for the
  // coordinator's stop_on_nan_loss.
  absl::StatusOr<bool> ComputeAndPush(LeaseInHand& hand, LeaseBatch& batch);

  // Pulls the parameters `batch` trains on and, in deterministic sync mode,
  // aligns the batch with the shards' round. False: the lease's previous
  // holder trained it to its end.
  absl::StatusOr<bool> PullFor(LeaseInHand& hand, LeaseBatch& batch);
  // Pulls for `rows`, waiting out sync rounds while the job runs. Reads
  // nothing if training stops meanwhile. A sync pull that outwaits its
  // round settles the overlapped push first: the round may wait for it.
  absl::Status Pull(const RowIds& rows, LeaseInHand& hand);
  // Deterministic sync mode (the lease has a first_round): makes `batch`
  // the batch of the round just pulled. A pull of an older round waits for
  // the batch's round; a newer round means the rounds between were
  // completed with this slot's part (by the lease's previous holder), so
  // their batches are skipped (false when that is the rest of the lease),
  // and the new batch's rows are pulled. Pushes then name the round on
  // every shard; a shard already past it (the previous holder's push
  // reached it) answers DUPLICATE.
  absl::StatusOr<bool> CatchUpWithRound(LeaseInHand& hand, LeaseBatch& batch);
  // The round the pulled parameters are at: the oldest version of the
  // shards read; -1 when none was.
  int64_t PulledRound() const;
  // The most updates a shard read had applied.
  int64_t PulledVersion() const;
  // Books `version`, a shard's count of applied updates from an answer,
  // toward the global step this worker has seen and reports.
  void NoteVersionSeen(int64_t version);
  // See reached_max_steps().
  bool ReachedMaxSteps() const;

  // Books a push's outcome; the batch's records go back if it was refused,
  // or (agreed rounds) if its round was full without it.
  absl::Status Settle(absl::StatusOr<PushSummary> summary, const PushOrigin& origin,
                      std::vector<RecordRange>& returned);
  // A wait of a sync round (a pull or a join) ended unanswered: reports,
  // to hear whether the job goes on, and says every log_waits_every how
  // long it has waited for `what`. False once training is over.
  bool GoesOnWaiting(absl::Time start, absl::Time& next_log, absl::string_view what);
  // Agreed rounds: joins the round of a push every shard staged; marks it
  // stale when it is late. An error leaves whether it joined unknown.
  absl::Status JoinRound(PushSummary& summary);
  // Waits for the overlapped push, if any, and settles it.
  absl::Status SettleOverlappedPush(LeaseInHand& hand);
  // Observes the time from `start` to now as `phase` of a step.
  void RecordPhase(StepPhase phase, absl::Time start);

  // Constant after construction.
  const StepRunnerOptions options_;
  Model& model_;
  ParameterServerClient& ps_;
  ProgressReporter& reporter_;
  LeaseFeeder& feeder_;
  Clock& clock_;
  WorkerMetrics* const metrics_;
  const std::function<bool()> over_;
  const RoundJoiner join_round_;

  PulledParameters pulled_;
  Gradients gradients_;
  ModelOutput output_;
  std::vector<int64_t> min_versions_;
  // With overlap_pull_with_push, unless the rounds are agreed: pushes run
  // behind the pulls.
  // Declared after what a push borrows (gradients_), so that it is
  // destroyed, waiting for a push in flight, before them.
  std::unique_ptr<OverlappedPush> overlapped_;
  bool reached_max_steps_ = false;
  // The most updates any shard said it had applied, in a pull or a push
  // answer.
  int64_t version_seen_ = 0;
};

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_STEP_RUNNER_H_
