#include "worker/internal/step_runner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/optimizer/gradient_clipping.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "worker/internal/record_ranges.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

// Records [begin, end) of `lease`, as a push names where its gradients
// came from.
PushOrigin OriginOf(const DataLease& lease, int64_t begin, int64_t end) {
  PushOrigin origin;
  origin.set_lease_id(lease.lease_id());
  origin.set_epoch(lease.epoch());
  origin.mutable_records()->set_begin(begin);
  origin.mutable_records()->set_end(end);
  return origin;
}

}  // namespace

StepRunner::StepRunner(StepRunnerOptions options, Model& model, ParameterServerClient& ps,
                       ProgressReporter& reporter, LeaseFeeder& feeder, Clock& clock,
                       WorkerMetrics* metrics, std::function<bool()> over,
                       RoundJoiner join_round)
    : options_(std::move(options)),
      model_(model),
      ps_(ps),
      reporter_(reporter),
      feeder_(feeder),
      clock_(clock),
      metrics_(metrics),
      over_(std::move(over)),
      join_round_(std::move(join_round)) {
  min_versions_.assign(options_.num_shards, 0);
  // Agreed rounds join each push's round with the coordinator once the
  // shards answered it, before the next pull: nothing to overlap.
  if (options_.overlap_pull_with_push && join_round_ == nullptr) {
    overlapped_ = std::make_unique<OverlappedPush>(ps_);
  }
}

absl::Status StepRunner::TrainLease(const DataLease& lease, LeaseBatchReader& reader,
                                    std::vector<RecordRange>* returned) {
  LeaseInHand hand{lease, reader, *returned};
  absl::Status error;
  bool tried_ahead = false;
  while (true) {
    if (over_()) {
      reporter_.EndTraining();
      break;
    }
    absl::StatusOr<bool> more = TrainStep(hand);
    if (!more.ok()) error = more.status();
    if (!more.ok() || !*more) break;
    // Once, when the lease nears its end; never before its first batch, so
    // that the two readers do not compete for that one.
    if (!tried_ahead && feeder_.NearEnd(reader)) {
      tried_ahead = true;
      if (!reporter_.training_over() && !reached_max_steps_) feeder_.TakeAhead(lease);
    }
  }
  // The lease's last push is waited for here, not overlapped with a pull:
  // a push_wait of its own, or the step-time breakdown would miss it.
  error.Update(SettleOverlappedPush(hand));
  if (error.ok()) error = AwaitLastRound(hand);
  if ((!error.ok() || reporter_.training_over() || reached_max_steps_) &&
      reader.next_position() < reader.end()) {
    returned->push_back(MakeRange(reader.next_position(), reader.end()));
  }
  if (error.ok()) reporter_.ReportIfDue();
  return error;
}

absl::Status StepRunner::AwaitLastRound(LeaseInHand& hand) {
  // Only rounds a shard decides alone answer a push before its round is
  // applied (AGGREGATED); agreed rounds answered MEMBER after the commit.
  if (!options_.sync || join_round_ != nullptr || reporter_.training_over() ||
      reached_max_steps_) {
    return absl::OkStatus();
  }
  // The lease is completed next, and a completed lease's records count as
  // trained in the checkpoints taken from then on. A checkpoint taken while
  // its last push waits in an open round would hold neither that push (the
  // shard's snapshot leaves an open round out) nor the records (counted as
  // trained): a restore would skip them, and with a slot per worker leave
  // the slot without a batch for that round, which then never closes.
  return Pull(RowIds(), hand);
}

absl::StatusOr<bool> StepRunner::TrainStep(LeaseInHand& hand) {
  const absl::Time read_start = clock_.Now();
  absl::StatusOr<LeaseBatch> next = hand.reader.Next();
  RecordPhase(StepPhase::kDataWait, read_start);
  if (absl::IsOutOfRange(next.status())) return false;
  RETURN_IF_ERROR(next.status());
  LeaseBatch& batch = *next;
  ++hand.batch_index;
  // Whatever ends this step before its push hands its records back.
  auto give_back = [&] { hand.returned.push_back(MakeRange(batch.begin, batch.end)); };

  const absl::Time pull_start = clock_.Now();
  const absl::StatusOr<bool> pulled = PullFor(hand, batch);
  RecordPhase(StepPhase::kPull, pull_start);
  if (pulled.ok() && !*pulled) return false;
  // The previous push (overlapped with this pull) is settled before its
  // progress is reported and before the gradients buffer is reused.
  const absl::Status settled = SettleOverlappedPush(hand);
  if (!pulled.ok() || !settled.ok() || reporter_.training_over()) {
    give_back();
    RETURN_IF_ERROR(settled);
    RETURN_IF_ERROR(pulled.status());
    return false;
  }
  NoteVersionSeen(PulledVersion());
  if (ReachedMaxSteps()) {
    give_back();
    reached_max_steps_ = true;
    return false;
  }
  reporter_.ReportIfDue();
  if (reporter_.training_over()) {
    give_back();
    return false;
  }
  return ComputeAndPush(hand, batch);
}

absl::StatusOr<bool> StepRunner::ComputeAndPush(LeaseInHand& hand, LeaseBatch& batch) {
  const absl::Time compute_start = clock_.Now();
  const absl::Status computed =
      model_.ComputeGradients(pulled_.View(), batch.batch, &output_, &gradients_);
  if (!computed.ok()) {
    hand.returned.push_back(MakeRange(batch.begin, batch.end));
    return computed;
  }
  RecordPhase(StepPhase::kCompute, compute_start);
  const int64_t examples = batch.batch.size;
  hand.reader.Recycle(std::move(batch.batch));  // its examples are no longer needed
  // Whole, before the client splits it over the shards (each sees only its
  // slice, whose norm is not the gradient's) and narrows it for the wire
  // (so that error feedback keeps what the clipped gradient lost).
  const double norm = ClipByGlobalNorm(options_.clip_norm, &gradients_);
  // A gradient that is not finite has diverged as surely as a loss that is
  // not, and counts as such: train-local, which would apply it, stops at
  // the next step's loss.
  const double loss = std::isfinite(norm) ? output_.loss : norm;
  reporter_.CountStep(examples, loss);
  if (!std::isfinite(loss)) {
    // Pushing would spread the damage; the coordinator decides whether
    // this ends the job, so tell it now.
    LOG(WARNING) << "job " << options_.job_id << ": loss " << output_.loss
                 << (std::isfinite(norm) ? "" : absl::StrCat(", gradient norm ", norm))
                 << " on records [" << batch.begin << ", " << batch.end
                 << "); gradients not pushed";
    reporter_.ReportAnySteps();
    return !reporter_.training_over();
  }
  PushOrigin origin = OriginOf(hand.lease, batch.begin, batch.end);
  if (overlapped_ != nullptr) {
    overlapped_->Start(gradients_, pulled_.versions, examples, std::move(origin));
    // Sync: the next pull goes out before this push's answer is read, and
    // waits on the shards for the round the push joins; the shard answers
    // it as the round is applied, a round trip sooner.
    if (options_.sync) min_versions_ = ps_.RoundEndsOfPushInFlight();
    return true;
  }
  const absl::Time push_start = clock_.Now();
  const absl::Status settled =
      Settle(ps_.Push(gradients_, pulled_.versions, examples, origin), origin, hand.returned);
  RecordPhase(StepPhase::kPushWait, push_start);
  RETURN_IF_ERROR(settled);
  reporter_.ReportIfDue();
  return !reporter_.training_over() && !reached_max_steps_;
}

absl::StatusOr<bool> StepRunner::PullFor(LeaseInHand& hand, LeaseBatch& batch) {
  ASSIGN_OR_RETURN(RowIds rows, model_.RowsToRead(batch.batch));
  RETURN_IF_ERROR(Pull(rows, hand));
  // Agreed rounds: a push names one round on every shard, so the
  // parameters must all be of it; a shard behind the newest round read is
  // read again once it has caught up.
  while (join_round_ != nullptr && !reporter_.training_over() && PulledRound() < PulledVersion()) {
    min_versions_.assign(min_versions_.size(), PulledVersion());
    RETURN_IF_ERROR(Pull(rows, hand));
  }
  if (reporter_.training_over() || !hand.lease.has_first_round()) return true;
  return CatchUpWithRound(hand, batch);
}

absl::Status StepRunner::Pull(const RowIds& rows, LeaseInHand& hand) {
  PullOptions options;
  options.min_versions = min_versions_;
  options.wait = options_.round_wait;
  const absl::Time start = clock_.Now();
  absl::Time next_log = start + options_.log_waits_every;
  while (true) {
    absl::Status status = ps_.Pull(rows, options, &pulled_);
    if (!absl::IsDeadlineExceeded(status) || over_()) return status;
    if (overlapped_ != nullptr && overlapped_->in_flight()) {
      // The round waited for may need the push in flight, which a shard
      // may have refused: its outcome decides whether to wait on.
      RETURN_IF_ERROR(SettleOverlappedPush(hand));
      options.min_versions = min_versions_;
    }
    // A sync round that others have not finished, or a shard that is down.
    if (!GoesOnWaiting(start, next_log, status.message())) return absl::OkStatus();
  }
}

bool StepRunner::GoesOnWaiting(absl::Time start, absl::Time& next_log, absl::string_view what) {
  // The others may have stopped (the coordinator waits for this worker to
  // hear it): ask whether the job still runs, and say what we wait for.
  reporter_.Report();
  if (reporter_.training_over()) return false;
  if (clock_.Now() >= next_log) {
    LOG(WARNING) << "job " << options_.job_id << ": still waiting after "
                 << absl::FormatDuration(absl::Trunc(clock_.Now() - start, absl::Seconds(1)))
                 << ": " << what;
    next_log = clock_.Now() + options_.log_waits_every;
  }
  return true;
}

int64_t StepRunner::PulledRound() const {
  int64_t oldest = -1;
  for (int64_t version : pulled_.versions) {
    if (version >= 0 && (oldest < 0 || version < oldest)) oldest = version;
  }
  return oldest;
}

absl::StatusOr<bool> StepRunner::CatchUpWithRound(LeaseInHand& hand, LeaseBatch& batch) {
  while (true) {
    const int64_t round = PulledRound();
    if (round < 0) return true;  // no shard read: nothing to align
    const int64_t want = hand.lease.first_round() + hand.batch_index;
    if (round == want) {
      for (int64_t& version : pulled_.versions) {
        if (version >= 0) version = round;
      }
      return true;
    }
    if (round < want) {
      // This slot's part of `round` is in; the batch in hand is for a
      // later round.
      LOG_EVERY_N(INFO, 100) << "job " << options_.job_id << ": lease " << hand.lease.lease_id()
                             << " holds this slot's batch of round " << want
                             << "; the shards are at round " << round
                             << ": waiting for the other slots' parts of the rounds before";
      for (int64_t& min_version : min_versions_) min_version = want;
    } else {
      for (int64_t skip = round - want; skip > 0; --skip) {
        absl::StatusOr<LeaseBatch> next = hand.reader.Next();
        if (absl::IsOutOfRange(next.status())) {
          VLOG(1) << "job " << options_.job_id << ": lease " << hand.lease.lease_id()
                  << " was trained to its end by its previous holder";
          return false;
        }
        RETURN_IF_ERROR(next.status());
        batch = *std::move(next);
        ++hand.batch_index;
      }
      LOG(INFO) << "job " << options_.job_id << ": taking lease " << hand.lease.lease_id()
                << " up at round " << round << ", batch " << hand.batch_index
                << "; the rounds before had its earlier batches";
    }
    ASSIGN_OR_RETURN(RowIds rows, model_.RowsToRead(batch.batch));
    RETURN_IF_ERROR(Pull(rows, hand));
    if (reporter_.training_over()) return true;
  }
}

absl::Status StepRunner::Settle(absl::StatusOr<PushSummary> summary, const PushOrigin& origin,
                                std::vector<RecordRange>& returned) {
  const RecordRange records = MakeRange(origin.records().begin(), origin.records().end());
  absl::Status failed = summary.status();
  // Agreed rounds: staged on every shard, the push is applied only if its
  // round takes it.
  if (failed.ok() && join_round_ != nullptr && !summary->stale) failed = JoinRound(*summary);
  if (!failed.ok()) {
    // Whether the shards applied it (or its round took it) is unknown: the
    // lease's hand-back asks their ledgers, so the records are trained
    // neither twice nor not at all. Returned too, for a coordinator that
    // cannot ask them.
    returned.push_back(records);
    feeder_.NoteUnknownOutcome(origin.lease_id());
    if (metrics_ != nullptr) {
      metrics_->RecordRequeuedBatch(summary.ok() ? "join_failed" : "push_failed");
    }
    // Training stopped while the round waited for other workers: the
    // ledgers will say whether it was committed; not an error of the run.
    if (ReasonOf(failed) == ERROR_REASON_ROUND_OPEN) return absl::OkStatus();
    return failed;
  }
  NoteVersionSeen(summary->version);
  if (!options_.sync && ReachedMaxSteps()) {
    // The shards applied max_steps updates: like every worker, this one
    // pushes nothing more (at most the pushes then in flight, one per
    // worker, go past it).
    reached_max_steps_ = true;
  }
  if (summary->stale) {
    returned.push_back(records);
    if (metrics_ != nullptr) metrics_->RecordRequeuedBatch("stale_push");
    VLOG(1) << "job " << options_.job_id << ": push " << summary->sequence
            << " refused as stale; records [" << records.begin() << ", " << records.end()
            << ") go back";
  }
  if (join_round_ != nullptr) {
    // Agreed rounds: whatever each shard answered, round r is over for
    // this worker once it is committed (with this push or without), and
    // the next pull waits for r + 1 everywhere.
    min_versions_.assign(min_versions_.size(), PulledRound() + 1);
  } else if (options_.sync) {
    min_versions_ = summary->next_min_versions;
  }
  return absl::OkStatus();
}

absl::Status StepRunner::JoinRound(PushSummary& summary) {
  const int64_t round = PulledRound();
  absl::StatusOr<JoinRoundResponse> answer = join_round_(round, summary);
  const absl::Time start = clock_.Now();
  absl::Time next_log = start + options_.log_waits_every;
  while (ReasonOf(answer.status()) == ERROR_REASON_ROUND_OPEN && !over_() &&
         GoesOnWaiting(start, next_log, absl::StrCat("round ", round, " to fill"))) {
    answer = join_round_(round, summary);
  }
  ASSIGN_OR_RETURN(const JoinRoundResponse joined, std::move(answer));
  summary.version = std::max(summary.version, joined.global_step());
  if (joined.outcome() == ROUND_JOIN_LATE) {
    // The round filled with other workers' pushes: nothing of this one is
    // applied anywhere, and its records go back as a stale push's do.
    summary.stale = true;
  } else if (joined.outcome() != ROUND_JOIN_MEMBER) {
    return absl::InternalError(absl::StrCat("the coordinator answered a round join with ",
                                            RoundJoin_Name(joined.outcome())));
  }
  return absl::OkStatus();
}

absl::Status StepRunner::SettleOverlappedPush(LeaseInHand& hand) {
  if (overlapped_ == nullptr || !overlapped_->in_flight()) return absl::OkStatus();
  const absl::Time start = clock_.Now();
  const PushOrigin origin = overlapped_->origin();
  const absl::Status settled = Settle(overlapped_->Finish(), origin, hand.returned);
  RecordPhase(StepPhase::kPushWait, start);
  return settled;
}

void StepRunner::RecordPhase(StepPhase phase, absl::Time start) {
  if (metrics_ != nullptr) metrics_->RecordPhase(phase, clock_.Now() - start);
}

int64_t StepRunner::PulledVersion() const {
  int64_t newest = 0;
  for (int64_t version : pulled_.versions) newest = std::max(newest, version);
  return newest;
}

void StepRunner::NoteVersionSeen(int64_t version) {
  version_seen_ = std::max(version_seen_, version);
  reporter_.NoteVersion(version_seen_);
}

bool StepRunner::ReachedMaxSteps() const {
  const int64_t max_steps = options_.max_steps;
  if (max_steps <= 0) return false;
  if (!options_.sync) return version_seen_ >= max_steps;
  // Sync: the parameters pulled are those after round max_steps on every
  // shard read (the others read -1: they do not hold the round).
  if (pulled_.versions.empty()) return false;
  int64_t oldest = std::numeric_limits<int64_t>::max();
  for (int64_t version : pulled_.versions) {
    if (version >= 0) oldest = std::min(oldest, version);
  }
  return oldest != std::numeric_limits<int64_t>::max() && oldest >= max_steps;
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
