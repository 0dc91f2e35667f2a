#include "worker/internal/lease_feeder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "worker/internal/record_ranges.h"

namespace pstrain {
namespace worker {
namespace internal {

LeaseFeeder::LeaseFeeder(CoordinatorClient& coordinator, std::string job_id,
                         LeaseFeederOptions options, ExampleSource& source, EpochOrders& orders,
                         const RetryContext& waits, WorkerMetrics* metrics,
                         std::function<bool()> over)
    : coordinator_(coordinator),
      job_id_(std::move(job_id)),
      options_(std::move(options)),
      source_(source),
      orders_(orders),
      waits_(waits),
      metrics_(metrics),
      over_(std::move(over)) {}

absl::StatusOr<std::unique_ptr<LeaseBatchReader>> LeaseFeeder::OpenReader(const DataLease& lease) {
  return LeaseBatchReader::Create(&source_, orders_.Order(lease.epoch()), lease.range().begin(),
                                  lease.range().end(), options_.data);
}

absl::StatusOr<std::optional<FedLease>> LeaseFeeder::Next() {
  if (ahead_.has_value()) {
    FedLease ahead = *std::move(ahead_);
    ahead_.reset();
    return ahead;
  }
  // Every range is leased out for now (one may come back), or the job is
  // not ready to hand any out yet: ask again after a pause.
  const RetryablePredicate waits =
      RetryableReasons({ERROR_REASON_NO_FREE_LEASE, ERROR_REASON_JOB_STARTING});
  std::optional<DataLease> taken;
  absl::Status refused;
  const absl::Status status = RetryUntilStopped(
      absl::StrCat(coordinator_.member().CoordinatorName(), " (a data lease of job ", job_id_, ")"),
      options_.backoff, waits_, waits, [&]() -> absl::Status {
        if (over_()) return absl::OkStatus();
        absl::StatusOr<DataLease> lease = coordinator_.AcquireDataLease(job_id_);
        refused = lease.status();
        if (waits(refused) && metrics_ != nullptr) metrics_->RecordRetry("no_free_lease");
        if (lease.ok()) taken = *std::move(lease);
        return refused;
      });
  // Stopped while it waited for a lease to come free.
  if (absl::IsCancelled(status) && waits(refused)) return std::nullopt;
  if (EndsRun(status)) {
    // The job ended, or this run of it rolled back: the assignment says
    // what comes next.
    LOG(INFO) << "job " << job_id_ << ": this run is over: " << status.message();
    return std::nullopt;
  }
  RETURN_IF_ERROR(status);
  if (!taken.has_value()) return std::nullopt;
  if (taken->end_of_data()) {
    LOG(INFO) << "job " << job_id_ << ": no more training data for this worker";
    return std::nullopt;
  }
  return FedLease{*std::move(taken), nullptr};
}

bool LeaseFeeder::NearEnd(const LeaseBatchReader& reader) const {
  const int64_t left = reader.end() - reader.next_position();
  return left <= options_.lease_ahead_batches * options_.data.batch_size;
}

void LeaseFeeder::TakeAhead(const DataLease& in_hand) {
  if (ahead_.has_value() || source_.block_layout() == nullptr || in_hand.has_first_round() ||
      options_.lease_ahead_batches <= 0) {
    return;
  }
  absl::StatusOr<DataLease> lease = coordinator_.AcquireDataLease(job_id_);
  // Refusals (none free now, the run is over) and errors are Next()'s to
  // wait out or act on when the lease in hand ends.
  if (!lease.ok() || lease->end_of_data()) {
    VLOG(1) << "job " << job_id_
            << ": no lease ahead: " << (lease.ok() ? "end of data" : lease.status().ToString());
    return;
  }
  absl::StatusOr<std::unique_ptr<LeaseBatchReader>> reader = OpenReader(*lease);
  if (!reader.ok()) {
    Complete(*lease, reader.status(), {MakeRange(lease->range().begin(), lease->range().end())});
    return;
  }
  ahead_ = FedLease{*std::move(lease), *std::move(reader)};
}

void LeaseFeeder::ReturnAhead(bool lapsed) {
  if (!ahead_.has_value()) return;
  FedLease ahead = *std::move(ahead_);
  ahead_.reset();
  ahead.reader.reset();  // stops reading
  if (lapsed) return;
  const DataLease& lease = ahead.lease;
  Complete(lease, absl::OkStatus(), {MakeRange(lease.range().begin(), lease.range().end())});
}

void LeaseFeeder::CountReturned(const std::vector<RecordRange>& returned) {
  if (metrics_ != nullptr) metrics_->RecordReturnedRecords(CountRecords(returned));
}

void LeaseFeeder::KeepForSlot(const DataLease& lease, const absl::Status& trained,
                              std::vector<RecordRange> returned) {
  CountReturned(Coalesce(std::move(returned)));
  LOG(WARNING) << "job " << job_id_ << ": lease " << lease.lease_id()
               << " stays with this worker's sync slot after: " << trained;
}

void LeaseFeeder::Complete(const DataLease& lease, const absl::Status& trained,
                           std::vector<RecordRange> returned) {
  returned = Coalesce(std::move(returned));
  CountReturned(returned);
  const int64_t returned_records = CountRecords(returned);
  const bool outcome_unknown = leases_with_unknown_pushes_.erase(lease.lease_id()) > 0;
  const absl::Status completed =
      coordinator_.CompleteDataLease(job_id_, lease.lease_id(), returned, outcome_unknown);
  if (!completed.ok()) {
    LOG(WARNING) << "job " << job_id_ << ": lease " << lease.lease_id() << " of records ["
                 << lease.range().begin() << ", " << lease.range().end()
                 << ") could not be completed (" << completed
                 << "); the coordinator hands its records out again";
  } else if (returned_records > 0) {
    LOG(INFO) << "job " << job_id_ << ": handed back " << returned_records << " of "
              << lease.range().end() - lease.range().begin() << " records of lease "
              << lease.lease_id() << (trained.ok() ? "" : " after an error");
  }
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
