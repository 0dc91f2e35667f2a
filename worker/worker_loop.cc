#include "worker/worker_loop.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_mode.h"
#include "common/config/job_spec_defaults.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/job_model.h"
#include "common/model/model.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "worker/overlapped_push.h"
#include "worker/push_incarnation.h"
#include "worker/shard_slicer.h"
#include "worker/training_data.h"

namespace pstrain {
namespace worker {
namespace {

std::string Seconds(absl::Duration d) {
  return absl::FormatDuration(absl::Trunc(d, absl::Seconds(1)));
}

RecordRange MakeRange(int64_t begin, int64_t end) {
  RecordRange range;
  range.set_begin(begin);
  range.set_end(end);
  return range;
}

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

// Sorted, with touching ranges merged.
std::vector<RecordRange> Coalesce(std::vector<RecordRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const RecordRange& a, const RecordRange& b) { return a.begin() < b.begin(); });
  std::vector<RecordRange> out;
  for (const RecordRange& r : ranges) {
    if (r.end() <= r.begin()) continue;
    if (!out.empty() && out.back().end() >= r.begin()) {
      out.back().set_end(std::max(out.back().end(), r.end()));
    } else {
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

// Everything one assignment needs, built on the compute thread and thrown
// away when the job ends for this worker.
class WorkerLoop::AssignmentRun {
 public:
  AssignmentRun(WorkerLoop& loop, const Assignment& assignment)
      : loop_(loop),
        assignment_(assignment),
        job_id_(assignment.job_id()),
        spec_(assignment.spec()),
        answers_before_(loop.coordinator_.member().last_heartbeat().answers),
        reregistrations_before_(loop.coordinator_.member().reregistrations()),
        last_report_(loop.clock_.Now()),
        known_global_step_(assignment.global_step()) {}

  ~AssignmentRun() {
    absl::MutexLock l(&loop_.mu_);
    loop_.ps_ = nullptr;
  }

  absl::Status Setup();
  absl::Status Train();

 private:
  // The lease being trained: its batches, the batch in hand, and the
  // records that go back to the coordinator with it (those of refused
  // pushes, and the unread rest when training ends early).
  struct LeaseInHand {
    const DataLease& lease;
    LeaseBatchReader& reader;
    std::vector<RecordRange>& returned;
    int64_t batch_index = -1;  // of the batch in hand, within the lease
  };

  // The next lease to train, waiting while every range is leased out or
  // the job is starting; none when this run has no more data (it ended for
  // this worker, the job ended or rolled back, or the run is Over()).
  absl::StatusOr<std::optional<DataLease>> NextLease();
  // Trains `lease` until its data ends, training stops or an error, from
  // `reader` (its lease ahead's), or a reader made here when null.
  absl::Status TrainLease(const DataLease& lease, std::unique_ptr<LeaseBatchReader> reader,
                          std::vector<RecordRange>* returned);
  // A lease taken while the one in hand trains (in its last
  // lease_ahead_batches batches), with a reader already assembling its
  // first batches. Streamed data only: the first batch of a lease needs
  // every block of its window read, and read ahead that is done while this
  // worker computes, not at the lease's first step (without it, data_wait
  // was 10% of the step of the cluster MLP on streamed data).
  // In memory a batch is a copy of rows, and holding a second lease would
  // only keep its records from other workers for longer.
  struct LeaseAhead {
    DataLease lease;
    std::unique_ptr<LeaseBatchReader> reader;
  };
  // Takes the next lease ahead if the data streams, the lease in hand is not
  // a sync slot's (those are dealt in round order, one at a time), and one
  // is free at once; otherwise NextLease() takes it when it is needed.
  void TakeLeaseAhead(const DataLease& in_hand);
  // Hands the lease ahead back whole: training ended before it began.
  void ReturnLeaseAhead();
  // One step: reads a batch, pulls its parameters and settles the push
  // overlapped with the pull, then ComputeAndPush. False when the lease's
  // training ends here without an error.
  absl::StatusOr<bool> TrainStep(LeaseInHand& hand);
  absl::StatusOr<bool> ComputeAndPush(LeaseInHand& hand, LeaseBatch& batch);
  // Completes `lease`, handing `returned` back, unless it stays with this
  // worker's sync slot.
  void HandBack(const DataLease& lease, const absl::Status& trained,
                const std::vector<RecordRange>& returned);
  // Whether a lease whose training ended with `trained` stays with this
  // worker's sync slot (for its next run) rather than being completed.
  bool KeepsForItsSlot(const DataLease& lease, const absl::Status& trained) const {
    return lease.has_first_round() && !trained.ok() && !stopping_;
  }

  // Pulls the parameters `batch` trains on and, in deterministic sync mode,
  // aligns the batch with the shards' round. False: the lease's previous
  // holder trained it to its end.
  absl::StatusOr<bool> PullFor(LeaseInHand& hand, LeaseBatch& batch);
  // Pulls for `rows`, waiting out sync rounds while the job runs. Reads
  // nothing if training stops meanwhile.
  absl::Status Pull(const RowIds& rows);
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
  // Sync mode: the parameters just pulled are those after round max_steps
  // on every shard, so this worker's part is done. Stopping here, rather
  // than when an answer to a report says so, ends a sync job exactly at
  // max_steps.
  bool PulledFinalRound() const;

  // Books a push's outcome; the batch's records go back if it was refused.
  absl::Status Settle(absl::StatusOr<PushSummary> summary, const PushOrigin& origin,
                      std::vector<RecordRange>& returned);
  // Waits for the overlapped push, if any, and settles it.
  absl::Status SettleOverlappedPush(LeaseInHand& hand);
  // Observes the time from `start` to now as `phase` of a step.
  void RecordPhase(StepPhase phase, absl::Time start);
  // Books a computed step for the next progress report.
  void CountStep(int64_t examples);

  // Reports progress when steps_per_loop steps have run (or `force` and
  // any have).
  void MaybeReport(bool force);
  // Reports whatever ran since the last report, possibly nothing; sets
  // stopping_ when the answer says the job is over for this worker.
  void SendReport();

  bool Over() { return loop_.JobOver(job_id_, answers_before_) || MembershipLapsed(); }
  // Reports what was applied and returns the Aborted status of a worker
  // that was marked lost (it registers again and takes the job up anew).
  absl::Status LostMembership();
  // This process registered again since the run began (it was marked lost,
  // e.g. frozen past its heartbeat deadline): its leases went to others,
  // so nothing more of this run may reach the shards.
  bool MembershipLapsed() const {
    return loop_.coordinator_.member().reregistrations() != reregistrations_before_;
  }

  WorkerLoop& loop_;
  const Assignment& assignment_;
  const std::string job_id_;
  const JobSpec& spec_;
  const int64_t answers_before_;
  const int64_t reregistrations_before_;

  std::unique_ptr<ComputeContext> compute_;
  std::unique_ptr<ExampleSource> source_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<ParameterServerClient> ps_;
  std::unique_ptr<EpochOrders> orders_;
  // Borrows source_, so declared after it.
  std::optional<LeaseAhead> ahead_;
  TrainingDataOptions data_;
  int64_t steps_per_loop_ = 0;
  bool sync_ = false;

  PulledParameters pulled_;
  Gradients gradients_;
  ModelOutput output_;
  std::vector<int64_t> min_versions_;
  // Async modes with overlap_pull_with_push: pushes run behind the pulls.
  // Declared after what a push borrows (ps_, gradients_), so that it is
  // destroyed, waiting for a push in flight, before them.
  std::unique_ptr<OverlappedPush> overlapped_;

  // Since the last progress report.
  int64_t steps_ = 0, examples_ = 0, applied_ = 0;
  double loss_sum_ = 0;
  absl::Time last_report_;
  int64_t newest_version_ = 0;
  // The global step in the coordinator's last answer.
  int64_t known_global_step_ = 0;
  // This run trains no more: an answer to a report stopped the job, or
  // the run was Over() between steps. The rest of the lease in hand goes
  // back and no lease is taken.
  bool stopping_ = false;
  // PulledFinalRound() was seen: report what is left and stop training.
  bool reached_max_steps_ = false;
  // Leases with a push whose outcome this worker never learned: their
  // hand-back asks the shards' ledgers what was trained.
  std::set<int64_t> leases_with_unknown_pushes_;
};

absl::Status WorkerLoop::AssignmentRun::Setup() {
  if (!JobModeTrains(spec_.mode())) {
    return absl::OkStatus();  // nothing to train; Train() sees no model
  }
  if (!spec_.has_train_data()) {
    return absl::InvalidArgumentError(absl::StrCat("job ", job_id_, " has no train_data"));
  }
  ASSIGN_OR_RETURN(source_, OpenTrainingData(spec_.train_data()));
  ASSIGN_OR_RETURN(JobModel model, CreateJobModel(spec_, source_->info()));
  compute_ = std::move(model.compute);
  model_ = std::move(model.model);
  ASSIGN_OR_RETURN(ShardSlicer slicer,
                   ShardSlicer::Create(model_->Variables(), assignment_.placements(),
                                       assignment_.ps_addresses_size()));
  ParameterServerClientOptions ps = loop_.options_.ps;
  ps.job_id = job_id_;
  // The shards know workers by rank in [0, num_workers).
  ps.worker = assignment_.num_workers() > 0 ? assignment_.worker_rank()
                                            : loop_.coordinator_.member().task().index();
  // Each run numbers its pushes afresh, above every earlier run: after a
  // rollback the shards hold the dedup state of the checkpoint, in which
  // this worker's earlier sequence numbers are already spent.
  ps.incarnation = NewPushIncarnation(loop_.clock_.Now(), loop_.random_.Next());
  ps.generation = assignment_.generation();
  MemberSession* member = &loop_.coordinator_.member();
  const int64_t registrations = reregistrations_before_;
  ps.membership_deadline = [member, registrations] {
    return member->reregistrations() == registrations ? member->MembershipDeadline()
                                                      : absl::InfinitePast();
  };
  ps.update_mode = UpdateModeOf(spec_.training());
  sync_ = ps.update_mode == UPDATE_MODE_SYNC;
  ps.gradient_dtype = WireDataTypeOf(spec_.training().wire().gradients());
  ps.parameter_dtype = WireDataTypeOf(spec_.training().wire().parameters());
  std::vector<std::string> addresses(assignment_.ps_addresses().begin(),
                                     assignment_.ps_addresses().end());
  ASSIGN_OR_RETURN(ps_, ParameterServerClient::Create(std::move(addresses), std::move(slicer), ps,
                                                      loop_.clock_, loop_.random_, loop_.metrics_,
                                                      loop_.options_.ps_channels));
  {
    absl::MutexLock l(&loop_.mu_);
    loop_.ps_ = ps_.get();
    if (loop_.stop_.stopped()) ps_->Cancel();
  }
  if (!sync_ && loop_.options_.overlap_pull_with_push) {
    overlapped_ = std::make_unique<OverlappedPush>(*ps_);
  }
  data_ = TrainingDataOptionsFromSpec(spec_.train_data());
  orders_ = std::make_unique<EpochOrders>(source_.get(), data_.shuffle, data_.seed);
  steps_per_loop_ = StepsPerLoopOf(spec_.training());
  min_versions_.assign(assignment_.ps_addresses_size(), 0);
  LOG(INFO) << "job " << job_id_ << ": training " << model_->name() << " on "
            << source_->info().DebugString() << " as worker rank " << ps.worker << " of "
            << assignment_.num_workers() << ", " << assignment_.ps_addresses_size()
            << " parameter servers, " << UpdateMode_Name(ps.update_mode)
            << (ps.gradient_dtype == DATA_TYPE_BFLOAT16 ? ", gradients pushed as bfloat16" : "")
            << (ps.parameter_dtype == DATA_TYPE_BFLOAT16 ? ", parameters pulled as bfloat16" : "");
  return absl::OkStatus();
}

absl::Status WorkerLoop::AssignmentRun::Train() {
  if (model_ == nullptr) {
    LOG(INFO) << "job " << job_id_ << " trains nothing (" << JobMode_Name(spec_.mode()) << ")";
    return absl::OkStatus();
  }
  while (!stopping_ && !reached_max_steps_ && !Over()) {
    std::optional<DataLease> lease;
    std::unique_ptr<LeaseBatchReader> reader;
    if (ahead_.has_value()) {
      lease = std::move(ahead_->lease);
      reader = std::move(ahead_->reader);
      ahead_.reset();
    } else {
      ASSIGN_OR_RETURN(lease, NextLease());
      if (!lease.has_value()) break;
    }
    std::vector<RecordRange> returned;
    const absl::Status trained = TrainLease(*lease, std::move(reader), &returned);
    HandBack(*lease, trained, Coalesce(std::move(returned)));
    if (!trained.ok()) ReturnLeaseAhead();
    if (absl::IsFailedPrecondition(trained)) {
      // A shard refused a push made after this worker's membership may
      // have lapsed (a process frozen past its heartbeat deadline): the
      // coordinator marks it lost and hands its data to others.
      if (ReasonOf(trained) == ERROR_REASON_MEMBERSHIP_LAPSED || MembershipLapsed()) {
        return LostMembership();
      }
      // The shards dropped the job (it ended while this worker trained),
      // or a newer run of it replaced this one (a rollback): this run is
      // over and the job's current assignment says what comes next.
      return absl::AbortedError(absl::StrCat("the parameter servers ended this run of job ",
                                             job_id_, ": ", trained.message()));
    }
    if (!trained.ok()) return trained;
  }
  ReturnLeaseAhead();
  if (MembershipLapsed()) return LostMembership();
  // The coordinator takes its final checkpoint once every worker has heard
  // the stop: report (empty reports when nothing is left) until it says so
  // or the job is over some other way.
  RepeatEvery(
      loop_.waits_, [this] { return loop_.options_.done_report_interval; },
      [this] {
        if (stopping_ || Over()) return false;
        SendReport();
        return !stopping_;
      });
  return absl::OkStatus();
}

absl::StatusOr<std::optional<DataLease>> WorkerLoop::AssignmentRun::NextLease() {
  // Every range is leased out for now (one may come back), or the job is
  // not ready to hand any out yet: ask again after a pause.
  const RetryablePredicate waits = RetryableReasons({ERROR_REASON_NO_FREE_LEASE, ERROR_REASON_JOB_STARTING});
  std::optional<DataLease> taken;
  absl::Status refused;
  const absl::Status status = RetryUntilStopped(
      absl::StrCat(loop_.coordinator_.member().CoordinatorName(), " (a data lease of job ", job_id_,
                   ")"),
      loop_.options_.backoff, loop_.waits_, waits, [&]() -> absl::Status {
        if (Over()) return absl::OkStatus();
        absl::StatusOr<DataLease> lease = loop_.coordinator_.AcquireDataLease(job_id_);
        refused = lease.status();
        if (waits(refused) && loop_.metrics_ != nullptr) {
          loop_.metrics_->RecordRetry("no_free_lease");
        }
        if (lease.ok()) taken = *std::move(lease);
        return refused;
      });
  // Stopped while it waited for a lease to come free.
  if (absl::IsCancelled(status) && waits(refused)) return std::nullopt;
  if (absl::IsFailedPrecondition(status)) {
    // The job ended, or this run of it rolled back: the assignment says
    // what comes next.
    LOG(INFO) << "job " << job_id_ << ": this run is over: " << status.message();
    return std::nullopt;
  }
  RETURN_IF_ERROR(status);
  if (taken.has_value() && taken->end_of_data()) {
    LOG(INFO) << "job " << job_id_ << ": no more training data for this worker";
    return std::nullopt;
  }
  return taken;
}

void WorkerLoop::AssignmentRun::HandBack(const DataLease& lease, const absl::Status& trained,
                                         const std::vector<RecordRange>& returned) {
  int64_t returned_records = 0;
  for (const RecordRange& r : returned) returned_records += r.end() - r.begin();
  if (loop_.metrics_ != nullptr) loop_.metrics_->RecordReturnedRecords(returned_records);
  if (KeepsForItsSlot(lease, trained)) {
    // Its rounds need exactly its data: the lease stays with this worker's
    // slot, and the next run takes it up where the rounds are.
    LOG(WARNING) << "job " << job_id_ << ": lease " << lease.lease_id()
                 << " stays with this worker's sync slot after: " << trained;
    return;
  }
  const bool outcome_unknown = leases_with_unknown_pushes_.erase(lease.lease_id()) > 0;
  const absl::Status completed =
      loop_.coordinator_.CompleteDataLease(job_id_, lease.lease_id(), returned, outcome_unknown);
  if (!completed.ok()) {
    LOG(WARNING) << "job " << job_id_ << ": lease " << lease.lease_id() << " of records ["
                 << lease.range().begin() << ", " << lease.range().end()
                 << ") could not be completed (" << completed
                 << "); the coordinator hands its records out again";
  } else if (returned_records > 0) {
    LOG(INFO) << "job " << job_id_ << ": handed back " << returned_records << " of "
              << lease.range().end() - lease.range().begin() << " records of lease "
              << lease.lease_id();
  }
}

void WorkerLoop::AssignmentRun::TakeLeaseAhead(const DataLease& in_hand) {
  if (ahead_.has_value() || source_->block_layout() == nullptr || in_hand.has_first_round() ||
      loop_.options_.lease_ahead_batches <= 0 || stopping_ || reached_max_steps_) {
    return;
  }
  absl::StatusOr<DataLease> lease = loop_.coordinator_.AcquireDataLease(job_id_);
  // Refusals (none free now, the run is over) and errors are NextLease()'s
  // to wait out or act on when the lease in hand ends.
  if (!lease.ok() || lease->end_of_data()) {
    VLOG(1) << "job " << job_id_
            << ": no lease ahead: " << (lease.ok() ? "end of data" : lease.status().ToString());
    return;
  }
  absl::StatusOr<std::unique_ptr<LeaseBatchReader>> reader =
      LeaseBatchReader::Create(source_.get(), orders_->Order(lease->epoch()),
                               lease->range().begin(), lease->range().end(), data_);
  if (!reader.ok()) {
    HandBack(*lease, reader.status(), {MakeRange(lease->range().begin(), lease->range().end())});
    return;
  }
  ahead_ = LeaseAhead{*std::move(lease), *std::move(reader)};
}

void WorkerLoop::AssignmentRun::ReturnLeaseAhead() {
  if (!ahead_.has_value()) return;
  LeaseAhead ahead = *std::move(ahead_);
  ahead_.reset();
  ahead.reader.reset();  // stops reading
  // A worker marked lost holds no leases: they went to others.
  if (MembershipLapsed()) return;
  const DataLease& lease = ahead.lease;
  HandBack(lease, absl::OkStatus(), {MakeRange(lease.range().begin(), lease.range().end())});
}

absl::Status WorkerLoop::AssignmentRun::LostMembership() {
  // What it pushed before it was lost was applied: count it.
  SendReport();
  return absl::AbortedError(absl::StrCat("worker was marked lost during job ", job_id_,
                                         " (no heartbeat in time); its data went to others"));
}

absl::Status WorkerLoop::AssignmentRun::TrainLease(const DataLease& lease,
                                                   std::unique_ptr<LeaseBatchReader> reader,
                                                   std::vector<RecordRange>* returned) {
  if (reader == nullptr) {
    ASSIGN_OR_RETURN(reader,
                     LeaseBatchReader::Create(source_.get(), orders_->Order(lease.epoch()),
                                              lease.range().begin(), lease.range().end(), data_));
  }
  LeaseInHand hand{lease, *reader, *returned};
  absl::Status error;
  bool tried_ahead = false;
  while (true) {
    if (Over()) {
      stopping_ = true;
      break;
    }
    absl::StatusOr<bool> more = TrainStep(hand);
    if (!more.ok()) error = more.status();
    if (!more.ok() || !*more) break;
    // Once, when the lease nears its end; never before its first batch, so
    // that the two readers do not compete for that one.
    const int64_t left = reader->end() - reader->next_position();
    if (!tried_ahead && left <= loop_.options_.lease_ahead_batches * data_.batch_size) {
      tried_ahead = true;
      TakeLeaseAhead(lease);
    }
  }
  // The lease's last push is waited for here, not overlapped with a pull:
  // a push_wait of its own, or the step-time breakdown would miss it.
  error.Update(SettleOverlappedPush(hand));
  if ((!error.ok() || stopping_) && reader->next_position() < reader->end()) {
    returned->push_back(MakeRange(reader->next_position(), reader->end()));
  }
  if (error.ok()) MaybeReport(/*force=*/false);
  return error;
}

absl::StatusOr<bool> WorkerLoop::AssignmentRun::TrainStep(LeaseInHand& hand) {
  const absl::Time read_start = loop_.clock_.Now();
  absl::StatusOr<LeaseBatch> next = hand.reader.Next();
  RecordPhase(StepPhase::kDataWait, read_start);
  if (absl::IsOutOfRange(next.status())) return false;
  RETURN_IF_ERROR(next.status());
  LeaseBatch& batch = *next;
  ++hand.batch_index;
  // Whatever ends this step before its push hands its records back.
  auto give_back = [&] { hand.returned.push_back(MakeRange(batch.begin, batch.end)); };

  const absl::Time pull_start = loop_.clock_.Now();
  const absl::StatusOr<bool> pulled = PullFor(hand, batch);
  RecordPhase(StepPhase::kPull, pull_start);
  if (pulled.ok() && !*pulled) return false;
  // The previous push (overlapped with this pull) is settled before its
  // progress is reported and before the gradients buffer is reused.
  const absl::Status settled = SettleOverlappedPush(hand);
  if (!pulled.ok() || !settled.ok() || stopping_) {
    give_back();
    RETURN_IF_ERROR(settled);
    RETURN_IF_ERROR(pulled.status());
    return false;
  }
  if (PulledFinalRound()) {
    give_back();
    reached_max_steps_ = true;
    return false;
  }
  MaybeReport(/*force=*/false);
  if (stopping_) {
    give_back();
    return false;
  }
  return ComputeAndPush(hand, batch);
}

absl::StatusOr<bool> WorkerLoop::AssignmentRun::ComputeAndPush(LeaseInHand& hand,
                                                               LeaseBatch& batch) {
  const absl::Time compute_start = loop_.clock_.Now();
  const absl::Status computed =
      model_->ComputeGradients(pulled_.View(), batch.batch, &output_, &gradients_);
  if (!computed.ok()) {
    hand.returned.push_back(MakeRange(batch.begin, batch.end));
    return computed;
  }
  RecordPhase(StepPhase::kCompute, compute_start);
  const int64_t examples = batch.batch.size;
  hand.reader.Recycle(std::move(batch.batch));  // its examples are no longer needed
  CountStep(examples);
  if (!std::isfinite(output_.loss)) {
    // Pushing would spread the damage; the coordinator decides whether
    // this ends the job, so tell it now.
    LOG(WARNING) << "job " << job_id_ << ": loss " << output_.loss << " on records [" << batch.begin
                 << ", " << batch.end << "); gradients not pushed";
    MaybeReport(/*force=*/true);
    return !stopping_;
  }
  PushOrigin origin = OriginOf(hand.lease, batch.begin, batch.end);
  if (overlapped_ != nullptr) {
    overlapped_->Start(gradients_, pulled_.versions, examples, std::move(origin));
    return true;
  }
  const absl::Time push_start = loop_.clock_.Now();
  const absl::Status settled =
      Settle(ps_->Push(gradients_, pulled_.versions, examples, origin), origin, hand.returned);
  RecordPhase(StepPhase::kPushWait, push_start);
  RETURN_IF_ERROR(settled);
  MaybeReport(/*force=*/false);
  return !stopping_;
}

void WorkerLoop::AssignmentRun::CountStep(int64_t examples) {
  if (loop_.metrics_ != nullptr) loop_.metrics_->RecordStep(examples);
  ++steps_;
  examples_ += examples;
  loss_sum_ += output_.loss;
  for (int64_t v : pulled_.versions) newest_version_ = std::max(newest_version_, v);
}

absl::StatusOr<bool> WorkerLoop::AssignmentRun::PullFor(LeaseInHand& hand, LeaseBatch& batch) {
  ASSIGN_OR_RETURN(RowIds rows, model_->RowsToRead(batch.batch));
  RETURN_IF_ERROR(Pull(rows));
  if (stopping_ || !hand.lease.has_first_round()) return true;
  ASSIGN_OR_RETURN(const bool in_lease, CatchUpWithRound(hand, batch));
  // Every round below the pulled one is complete: the coordinator counts
  // the global step by it in this mode.
  if (in_lease) newest_version_ = std::max(newest_version_, PulledRound());
  return in_lease;
}

absl::Status WorkerLoop::AssignmentRun::Pull(const RowIds& rows) {
  PullOptions options;
  options.min_versions = min_versions_;
  options.wait = loop_.options_.round_wait;
  const absl::Time start = loop_.clock_.Now();
  absl::Time next_log = start + loop_.options_.backoff.log_every;
  while (true) {
    absl::Status status = ps_->Pull(rows, options, &pulled_);
    if (!absl::IsDeadlineExceeded(status) || Over()) return status;
    // A sync round that others have not finished (they may have stopped:
    // the coordinator waits for this worker to hear it), or a shard that
    // is down: ask whether the job still runs, and say what we wait for.
    SendReport();
    if (stopping_) return absl::OkStatus();
    if (loop_.clock_.Now() >= next_log) {
      LOG(WARNING) << "job " << job_id_ << ": still waiting after "
                   << Seconds(loop_.clock_.Now() - start) << ": " << status.message();
      next_log = loop_.clock_.Now() + loop_.options_.backoff.log_every;
    }
  }
}

int64_t WorkerLoop::AssignmentRun::PulledRound() const {
  int64_t oldest = -1;
  for (int64_t version : pulled_.versions) {
    if (version >= 0 && (oldest < 0 || version < oldest)) oldest = version;
  }
  return oldest;
}

absl::StatusOr<bool> WorkerLoop::AssignmentRun::CatchUpWithRound(LeaseInHand& hand,
                                                                 LeaseBatch& batch) {
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
      for (int64_t& min_version : min_versions_) min_version = want;
    } else {
      for (int64_t skip = round - want; skip > 0; --skip) {
        absl::StatusOr<LeaseBatch> next = hand.reader.Next();
        if (absl::IsOutOfRange(next.status())) {
          VLOG(1) << "job " << job_id_ << ": lease " << hand.lease.lease_id()
                  << " was trained to its end by its previous holder";
          return false;
        }
        RETURN_IF_ERROR(next.status());
        batch = *std::move(next);
        ++hand.batch_index;
      }
      LOG(INFO) << "job " << job_id_ << ": taking lease " << hand.lease.lease_id()
                << " up at round " << round << ", batch " << hand.batch_index
                << "; the rounds before had its earlier batches";
    }
    ASSIGN_OR_RETURN(RowIds rows, model_->RowsToRead(batch.batch));
    RETURN_IF_ERROR(Pull(rows));
    if (stopping_) return true;
  }
}

absl::Status WorkerLoop::AssignmentRun::Settle(absl::StatusOr<PushSummary> summary,
                                               const PushOrigin& origin,
                                               std::vector<RecordRange>& returned) {
  const RecordRange records = MakeRange(origin.records().begin(), origin.records().end());
  if (!summary.ok()) {
    // Whether the shards applied it is unknown: the lease's hand-back asks
    // their ledgers, so the records are trained neither twice nor not at
    // all. Returned too, for a coordinator that cannot ask them.
    returned.push_back(records);
    leases_with_unknown_pushes_.insert(origin.lease_id());
    if (loop_.metrics_ != nullptr) loop_.metrics_->RecordRequeuedBatch("push_failed");
    return summary.status();
  }
  if (summary->stale) {
    returned.push_back(records);
    if (loop_.metrics_ != nullptr) loop_.metrics_->RecordRequeuedBatch("stale_push");
    VLOG(1) << "job " << job_id_ << ": push " << summary->sequence << " refused as stale; records ["
            << records.begin() << ", " << records.end() << ") go back";
  } else if (summary->applied) {
    ++applied_;
  }
  if (sync_) min_versions_ = summary->next_min_versions;
  return absl::OkStatus();
}

absl::Status WorkerLoop::AssignmentRun::SettleOverlappedPush(LeaseInHand& hand) {
  if (overlapped_ == nullptr || !overlapped_->in_flight()) return absl::OkStatus();
  const absl::Time start = loop_.clock_.Now();
  const PushOrigin origin = overlapped_->origin();
  const absl::Status settled = Settle(overlapped_->Finish(), origin, hand.returned);
  RecordPhase(StepPhase::kPushWait, start);
  return settled;
}

void WorkerLoop::AssignmentRun::RecordPhase(StepPhase phase, absl::Time start) {
  if (loop_.metrics_ != nullptr) loop_.metrics_->RecordPhase(phase, loop_.clock_.Now() - start);
}

bool WorkerLoop::AssignmentRun::PulledFinalRound() const {
  const int64_t max_steps = spec_.stop().max_steps();
  if (!sync_ || max_steps <= 0 || pulled_.versions.empty()) return false;
  // Shards not involved in this pull read -1; they do not hold the round.
  int64_t oldest = std::numeric_limits<int64_t>::max();
  for (int64_t version : pulled_.versions) {
    if (version >= 0) oldest = std::min(oldest, version);
  }
  return oldest != std::numeric_limits<int64_t>::max() && oldest >= max_steps;
}

void WorkerLoop::AssignmentRun::MaybeReport(bool force) {
  int64_t due = steps_per_loop_;
  const int64_t max_steps = spec_.stop().max_steps();
  if (max_steps > 0) {
    // Each worker trains on until a report's answer tells it to stop, so
    // near max_steps every worker reporting only each steps_per_loop steps
    // would overshoot by up to that many steps each. Report sooner the
    // closer the end: at most the remaining steps shared among workers.
    const int64_t remaining = max_steps - known_global_step_;
    const int64_t workers = std::max(1, assignment_.num_workers());
    due = std::clamp<int64_t>(remaining / workers, 1, steps_per_loop_);
  }
  if (steps_ == 0 || (!force && steps_ < due)) return;
  SendReport();
}
void WorkerLoop::AssignmentRun::SendReport() {
  const absl::Time now = loop_.clock_.Now();
  const double seconds = std::max(1e-9, absl::ToDoubleSeconds(now - last_report_));
  ProgressReport report;
  report.set_job_id(job_id_);
  report.set_generation(assignment_.generation());
  report.set_steps(steps_);
  report.set_examples(examples_);
  report.set_applied_updates(applied_);
  if (steps_ > 0) report.set_loss(loss_sum_ / static_cast<double>(steps_));
  report.set_seconds(seconds);
  report.set_parameter_version(newest_version_);
  // Only whole loops: the short tail of a lease or a job would skew them.
  if (loop_.metrics_ != nullptr && steps_ >= steps_per_loop_) {
    loop_.metrics_->SetLoop(report.loss(), examples_ / seconds);
  }
  steps_ = examples_ = applied_ = 0;
  loss_sum_ = 0;
  last_report_ = now;
  absl::StatusOr<ProgressResponse> response = loop_.coordinator_.ReportProgress(report);
  if (response.ok()) known_global_step_ = std::max(known_global_step_, response->global_step());
  if (absl::IsFailedPrecondition(response.status())) {
    LOG(INFO) << "job " << job_id_ << " ended: " << response.status().message();
    stopping_ = true;
  } else if (!response.ok()) {
    // The client keeps the report and sends it before the next one.
    LOG(WARNING) << "job " << job_id_
                 << ": progress report not delivered yet: " << response.status();
  } else if (response->stop()) {
    LOG(INFO) << "job " << job_id_ << ": the coordinator stops training at global step "
              << response->global_step() << " (" << StopReason_Name(response->stop_reason()) << ")";
    stopping_ = true;
  }
}

WorkerLoop::WorkerLoop(CoordinatorClient& coordinator, WorkerLoopOptions options, Clock& clock,
                       RandomSource& random, WorkerMetrics* metrics)
    : coordinator_(coordinator),
      options_(std::move(options)),
      clock_(clock),
      random_(random),
      metrics_(metrics) {}

void WorkerLoop::Stop() {
  absl::MutexLock l(&mu_);
  stop_.Stop();
  coordinator_.member().Cancel();
  if (ps_ != nullptr) ps_->Cancel();
}

bool WorkerLoop::shutdown_requested() const {
  absl::MutexLock l(&mu_);
  return shutdown_requested_;
}

bool WorkerLoop::JobOver(const std::string& job_id, int64_t answers_before) {
  if (stop_.stopped()) return true;
  const HeartbeatView heartbeat = coordinator_.member().last_heartbeat();
  if (heartbeat.shutdown) {
    absl::MutexLock l(&mu_);
    shutdown_requested_ = true;
    return true;
  }
  // One heartbeat may have been in flight when the job was assigned, its
  // answer older than the assignment: only the answers after it count.
  return heartbeat.answers > answers_before + 1 && heartbeat.job_id != job_id;
}

absl::Status WorkerLoop::RunAssignment(const Assignment& assignment) {
  AssignmentRun run(*this, assignment);
  RETURN_IF_ERROR(run.Setup());
  return run.Train();
}

class WorkerLoop::Role : public MemberRole {
 public:
  explicit Role(WorkerLoop& loop) : loop_(loop) {}

  absl::Status RunAssignment(const Assignment& assignment) override {
    loop_.coordinator_.SetJob(assignment.job_id());
    if (loop_.metrics_ != nullptr) loop_.metrics_->SetBusy(true);
    absl::Status trained = loop_.RunAssignment(assignment);
    if (loop_.metrics_ != nullptr) loop_.metrics_->SetBusy(false);
    loop_.coordinator_.SetJob("");
    return trained;
  }
  void DescribeSelf(HeartbeatRequest* beat) override { loop_.coordinator_.DescribeSelf(beat); }
  // The run in hand sees it too (JobOver) and ends after handing its lease
  // back; the member loop then returns.
  void ShutDown() override {
    absl::MutexLock l(&loop_.mu_);
    loop_.shutdown_requested_ = true;
  }

 private:
  WorkerLoop& loop_;
};

absl::Status WorkerLoop::Run() {
  Role role(*this);
  MemberLoopOptions options;
  options.assignment_wait = options_.assignment_wait;
  options.pauses = options_.backoff;
  MemberLoop member(coordinator_.member(), role, options);
  const absl::Status served = member.Run();
  if (member.shutdown_requested()) {
    absl::MutexLock l(&mu_);
    shutdown_requested_ = true;
  }
  return served;
}

}  // namespace worker
}  // namespace pstrain
