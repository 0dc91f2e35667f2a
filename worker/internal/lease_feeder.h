#ifndef PSTRAIN_WORKER_INTERNAL_LEASE_FEEDER_H_
#define PSTRAIN_WORKER_INTERNAL_LEASE_FEEDER_H_

// The data side of one assignment run: takes the leases of training
// records from the coordinator (waiting while every range is out), opens a
// reader on each, takes the next lease ahead on streamed data, and hands
// each lease back with the records that were not trained.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/retry/retry.h"
#include "protos/coordinator.pb.h"
#include "worker/coordinator_client.h"
#include "worker/training_data.h"
#include "worker/worker_metrics.h"

namespace pstrain {
namespace worker {
namespace internal {

// A lease and a reader of its batches, already reading when the lease was
// taken ahead; null otherwise (OpenReader).
struct FedLease {
  DataLease lease;
  std::unique_ptr<LeaseBatchReader> reader;
};

struct LeaseFeederOptions {
  // Pauses before asking again while every range is out or the job is
  // starting; the deadline is not read.
  RetryOptions backoff;
  // Streamed data: take the next lease once the one in hand has this many
  // batches left (see TakeAhead); 0: never.
  int lease_ahead_batches = 16;
  TrainingDataOptions data;
};

// Not thread-safe: the run's compute thread only.
class LeaseFeeder {
 public:
  // Everything borrowed must outlive the feeder; `metrics` may be null.
  // `over` says whether the run is over (the job changed, Stop()).
  LeaseFeeder(CoordinatorClient& coordinator, std::string job_id, LeaseFeederOptions options,
              ExampleSource& source, EpochOrders& orders, const RetryContext& waits,
              WorkerMetrics* metrics, std::function<bool()> over);

  LeaseFeeder(const LeaseFeeder&) = delete;
  LeaseFeeder& operator=(const LeaseFeeder&) = delete;

  // The next lease to train: the one taken ahead, or one asked for now, waiting while every range
  // is leased out or the job is starting. None when this run has no more data (it ended for this
  // worker, the job ended or rolled back, the run is over, or stopped).
  absl::StatusOr<std::optional<FedLease>> Next();
  // A reader of `lease`'s batches.
  absl::StatusOr<std::unique_ptr<LeaseBatchReader>> OpenReader(const DataLease& lease);

  // A lease taken while the one in hand trains (in its last
  // lease_ahead_batches batches), with a reader already assembling its
  // first batches. Streamed data only: the first batch of a lease needs
  // every block of its window read, and read ahead that is done while this
  // worker computes, not at the lease's first step (without it, data_wait
  // was 10% of the step of the cluster MLP on streamed data). In memory a
  // batch is a copy of rows, and holding a second lease would only keep its
  // records from other workers for longer. Not for a sync slot's lease
  // (those are dealt in round order, one at a time), and only if one is
  // free at once; otherwise Next() takes it when it is needed.
  void TakeAhead(const DataLease& in_hand);
  // Whether the lease in hand, with `reader`, is near enough its end to
  // take the next one ahead.
  bool NearEnd(const LeaseBatchReader& reader) const;
  // Hands the lease ahead back whole: training ended before it began. A
  // worker whose membership `lapsed` holds no leases: they went to others.
  void ReturnAhead(bool lapsed);

  // Completes `lease`, handing `returned` back untrained; `trained` says
  // how its training ended, for the log.
  void Complete(const DataLease& lease, const absl::Status& trained,
                std::vector<RecordRange> returned);
  // Keeps `lease` with this worker's sync slot rather than completing it:
  // its rounds need exactly its data, and the next run takes it up where
  // the rounds are.
  void KeepForSlot(const DataLease& lease, const absl::Status& trained,
                   std::vector<RecordRange> returned);
  // A push of `lease_id` ended without this worker learning whether the
  // shards applied it: the lease's hand-back asks their ledgers.
  void NoteUnknownOutcome(int64_t lease_id) { leases_with_unknown_pushes_.insert(lease_id); }

 private:
  void CountReturned(const std::vector<RecordRange>& returned);

  // Constant after construction.
  CoordinatorClient& coordinator_;
  const std::string job_id_;
  const LeaseFeederOptions options_;
  ExampleSource& source_;
  EpochOrders& orders_;
  const RetryContext waits_;
  WorkerMetrics* const metrics_;
  const std::function<bool()> over_;

  std::optional<FedLease> ahead_;
  // Leases with a push whose outcome this worker never learned.
  std::set<int64_t> leases_with_unknown_pushes_;
};

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_LEASE_FEEDER_H_
