#ifndef PSTRAIN_SERVER_COORDINATOR_DATA_LEASE_MANAGER_H_
#define PSTRAIN_SERVER_COORDINATOR_DATA_LEASE_MANAGER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/clock/clock.h"
#include "protos/checkpoint.pb.h"
#include "protos/coordinator.pb.h"
#include "server/coordinator/internal/range_set.h"

namespace pstrain {
namespace coordinator {

// The lease size a job gets when none is configured: a quarter of each
// worker's share of an epoch, at least 1024 and at most 16384 records.
// Small enough that a lost worker's lease costs little to redo, that a
// checkpoint's position is fine-grained and that the workers finish an
// epoch together; large enough that a worker asks for data rarely. Each
// lease costs its worker a round trip to the coordinator, the wait for the
// lease's last push (not overlapped with the next pull) and a new reader:
// with leases of 1024 Fashion-MNIST records (8 steps) that was 0.2-0.3 ms of
// idle per 2.6 ms step on the local cluster; with 8192, 0.05-0.14 ms.
// Data streamed from files (records_per_window > 0) gets a multiple of its
// shuffle window (EpochOrder::Blocked), at least one: a lease that covers
// part of a window decodes all of the window's blocks, so misaligned leases
// read the data about twice.
int64_t LeaseSizeFor(int64_t num_records, int num_workers, int64_t records_per_window = 0);

struct DataLeaseOptions {
  // Records in the training data; required, > 0.
  int64_t num_records = 0;
  // Records per lease (see LeaseSizeFor). Default 1024.
  int64_t chunk_size = 1024;
  // Passes over the data; 0 repeats until another stop condition ends the
  // job (DataSpec.epochs).
  int32_t epochs = 0;
  // A lease not completed within this time goes back to the queue. Default
  // 5 minutes: a lost worker's leases come back sooner through membership
  // (heartbeat timeout); this is the backstop for a worker that is alive
  // but stuck. Too short a timeout hands a slow worker's records to another
  // as well, and they are trained on twice.
  absl::Duration lease_timeout = absl::Minutes(5);
  // Default true: once every range of an epoch is handed out, hand out the
  // next epoch while the last leases of this one are outstanding, so that
  // workers never idle at an epoch boundary (in sync mode an idle worker
  // would hold up the round of those still finishing the epoch). The cost:
  // a checkpoint taken in that window records only the older epoch's
  // progress (DataPosition holds one epoch), so a restore from it reads the
  // newer epoch's ranges finished in the window again. False: exact
  // positions, and Acquire is Unavailable at each epoch boundary until the
  // epoch's last lease is completed.
  bool overlap_epochs = true;
  // The first lease id; later ones count up from it. Default 0: a random
  // value in [1, 2^62). Lease ids must not repeat across coordinator
  // restarts: a worker that outlived the old coordinator still holds its
  // leases, and the new one must refuse them rather than mistake one for a
  // lease of its own with the same id.
  int64_t first_lease_id = 0;
  // Deterministic sync mode (every worker in each round, no backups): > 0
  // deals the leases to this many slots, one per worker rank, instead of to
  // whoever asks first, and numbers the rounds each lease covers, so that
  // round r's batches are fixed by the data order and r, not by timing.
  // The next range goes to the slot whose leases end soonest (ties: the
  // lower rank), whichever slot asks; a lease whose holder is lost or
  // expires stays with its slot (DataLease.first_round unchanged) for the
  // slot's next holder. Default 0: leases go to whoever asks.
  int32_t sync_slots = 0;
  // With sync_slots: records per batch (DataSpec.batch_size), to count the
  // rounds of a lease: ceil(records / records_per_batch).
  int64_t records_per_batch = 0;
};

// Counters for status pages and metrics.
struct DataLeaseStats {
  int32_t epoch = 0;  // the oldest epoch not finished
  int64_t leases_outstanding = 0;
  int64_t records_finished = 0;  // of `epoch`
  bool end_of_data = false;
};

// Hands out a data set of num_records records as leases on ranges
// [begin, end), epoch by epoch, and tracks which ranges are finished (their
// gradients applied), so that every record of every epoch is trained on
// once: a range comes back to the front of the queue when its lease expires,
// its holder is lost or restarts, or its holder returns it (a late gradient
// refused in sync mode); and a checkpoint's DataPosition lets a restarted job
// resume without skipping or repeating records. Thread-safe.
//
// Leases name their holder (HolderName: task and incarnation); only the
// holder can complete a lease.
class DataLeaseManager {
 public:
  // InvalidArgument: num_records or chunk_size <= 0, epochs < 0,
  // lease_timeout <= 0, or first_lease_id < 0.
  static absl::StatusOr<std::unique_ptr<DataLeaseManager>> Create(Clock& clock,
                                                                  DataLeaseOptions options);

  DataLeaseManager(const DataLeaseManager&) = delete;
  DataLeaseManager& operator=(const DataLeaseManager&) = delete;

  // Leases the next range (at most chunk_size records) to `holder`:
  // returned and expired ranges first, oldest epoch first. Once the last
  // epoch is handed out and completed, returns a lease with only
  // end_of_data set.
  // InvalidArgument: empty holder.
  // Unavailable: every range is leased out and others' leases are still
  //   outstanding; ask again (an expiry or a return may free a range).
  absl::StatusOr<DataLease> Acquire(absl::string_view holder);

  // With sync_slots: the lease slot `slot` trains next, with its
  // first_round, now held by `holder` (taken from a previous holder of the
  // slot, which can no longer complete it). Deals ranges to the slots in
  // order until this slot has one. Once the last epoch is dealt and
  // completed, a lease with only end_of_data set.
  // InvalidArgument: empty holder, slot outside [0, sync_slots), or a
  //   manager without slots.
  // Unavailable: no range left to deal for now; ask again.
  // A slot that has trained all its leases when the last epoch has no range
  // left to deal gets end_of_data too: its share of the data ran out, and
  // no round after its last can fill (see sync_rounds_end).
  absl::StatusOr<DataLease> AcquireForSlot(absl::string_view holder, int slot);

  // The holder finished lease `lease_id`: its records are finished except
  // `returned` ones (whose gradients were refused), which go back to the
  // front of the queue. Nothing changes on error.
  // NotFound: no such lease held by `holder` (unknown, completed, expired or
  //   released: its records were already re-queued).
  // InvalidArgument: a returned range is empty, reversed, outside the lease,
  //   or overlaps another.
  absl::Status Complete(int64_t lease_id, absl::string_view holder,
                        absl::Span<const RecordRange> returned);

  // Puts the ranges of every lease past its deadline back at the front of
  // the queue and returns those leases. Acquire and Complete expire leases
  // themselves; calling this from a ticker keeps expiries visible (logs,
  // metrics) when no worker asks.
  std::vector<DataLease> ExpireLeases();

  // Puts every lease of `holder` back at the front of the queue (its worker
  // was lost or restarted) and returns how many there were.
  int ReleaseHolder(absl::string_view holder);

  // The leases `holder` holds, oldest first.
  std::vector<DataLease> LeasesOf(absl::string_view holder) const;

  // The holder of lease `lease_id` was lost after the shards applied pushes
  // of its `trained` records: those are finished, the rest of the lease
  // goes back to the front of the queue. `trained` is clipped to the lease.
  // NotFound and InvalidArgument as Complete (the lease is gone: its
  // records were re-queued whole). FailedPrecondition: a sync slot's lease
  // (sync_slots), which waits whole for the slot's next holder.
  absl::Status HandBackUntrained(int64_t lease_id, absl::string_view holder,
                                 absl::Span<const RecordRange> trained);

  // Where training stands, for a checkpoint: the oldest unfinished epoch
  // and its finished ranges, coalesced, and those of the next epoch when it
  // is handed out already (overlap_epochs). After the last epoch it is that
  // epoch with every record finished.
  DataPosition Position() const;

  // Resumes from a checkpoint's position: the position's epoch continues
  // with its unfinished ranges, then the next epoch's unfinished ranges
  // (next_epoch_finished), then later epochs. Every lease outstanding
  // is void (completing it is NotFound). An epoch past the last (a job
  // resumed with fewer epochs) means end of data. A position whose
  // num_records is 0 and that lists nothing is a fresh start. With
  // sync_slots, each slot gets back what its leases in the position's
  // slot_leases hold beyond the finished records, in its order and with the
  // rounds they had (a slot past the job's sync_slots gives them back to the
  // queue); the next lease of a slot with none starts at round `round` (the
  // restored global step).
  // FailedPrecondition: the position counts a different number of records
  //   (the data changed since the checkpoint).
  // InvalidArgument: a negative epoch, or a finished range (of either
  //   epoch) that is empty, reversed, out of bounds or overlapping another,
  //   or a slot lease with a negative field or records out of bounds.
  //   Nothing changes on error. next_epoch_finished is ignored when the
  //   position's epoch is the last.
  // With `sync_slots`, the leases are dealt to that many slots from now on
  // (the job's workers changed; InvalidArgument for a manager without slots
  // or fewer than 1).
  absl::Status RestoreFrom(const DataPosition& position, int64_t round = 0,
                           std::optional<int> sync_slots = std::nullopt);

  // Whether every record of the last epoch is finished.
  bool end_of_data() const;
  // With sync_slots and an epoch limit: once a slot's share of the last
  // epoch has run out, the first round it has no batch for. Every round
  // needs a batch from each slot, so training ends when the global step
  // reaches it; the records still leased to other slots then stay
  // untrained (a round short of a batch cannot be applied). nullopt until
  // a slot runs out.
  std::optional<int64_t> sync_rounds_end() const;

  DataLeaseStats Stats() const;

 private:
  using Range = internal::Range;

  struct Epoch {
    int32_t number = 0;
    // Ranges not leased out, front first. A range may exceed chunk_size
    // (the untouched rest of the epoch); Acquire cuts a chunk off its front.
    std::deque<Range> pending;
    internal::RangeSet finished;
    int64_t leased = 0;  // outstanding leases of this epoch
  };

  struct Lease {
    int32_t epoch = 0;
    Range range;
    // Empty while a slot's lease waits for its slot's next holder.
    std::string holder;
    // InfiniteFuture: none (a slot's lease waiting for a holder).
    absl::Time deadline = absl::InfiniteFuture();
    // With sync_slots: the slot it was dealt to and its first round.
    int slot = -1;
    int64_t first_round = 0;
  };

  // With sync_slots: one worker rank's leases, in the order it trains them.
  struct Slot {
    int64_t next_round = 0;  // the first round after its leases
    std::deque<int64_t> leases;
  };

  DataLeaseManager(Clock& clock, DataLeaseOptions options);

  // Each slot's leases with their first rounds, for the log.
  std::string SlotsText() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Epoch FreshEpoch(int32_t number) const;
  // An epoch with `finished` done and the rest pending; `field` names the
  // position's field in errors.
  absl::StatusOr<Epoch> EpochFrom(int32_t number,
                                  const google::protobuf::RepeatedPtrField<RecordRange>& finished,
                                  absl::string_view field) const;
  bool IsLastEpoch(int32_t number) const;
  // Every range of the last epoch, and of the epoch before it, has been
  // dealt.
  bool NothingLeftToDeal() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Epoch* FindEpoch(int32_t number) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Cuts the next range to lease (at most chunk_size records): returned and
  // expired ranges first, the oldest epoch first. Unavailable as Acquire.
  absl::StatusOr<std::pair<int32_t, Range>> CutRange(absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Cuts the next range and deals it to the slot whose leases end soonest.
  absl::Status DealToNextSlot(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // InvalidArgument unless each of the position's slot_leases has fields
  // >= 0 and records within the data.
  absl::Status ValidateSlotLeases(const DataPosition& position) const;
  // Takes `range` out of `epoch`'s queue; false when no queued range holds
  // all of it.
  static bool TakeFromPending(Epoch& epoch, Range range);
  // With sync_slots, restoring: deals to each slot, in its order, what the
  // position's slot_leases hold beyond the finished records (a tail of whole
  // batches from round `round` or later), as the slot would have trained it.
  void DealBackToSlots(const DataPosition& position, int64_t round)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts a lease's range back at the front of its epoch's queue and forgets
  // the lease; a slot's lease instead waits, unheld, for the slot's next
  // holder.
  void Requeue(std::map<int64_t, Lease>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<DataLease> ExpireLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives lease `it` a new deadline (InfiniteFuture: none), keeping
  // by_deadline_ in step.
  void SetDeadline(std::map<int64_t, Lease>::iterator it, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Erases lease `it` and its place in by_deadline_.
  void Forget(std::map<int64_t, Lease>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves past every finished epoch.
  void Advance() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  DataLease ToProto(int64_t id, const Lease& lease) const;

  // Constant after construction.
  Clock& clock_;
  const DataLeaseOptions options_;

  mutable absl::Mutex mu_;
  // The oldest unfinished epoch (meaningless once end_of_data_).
  Epoch current_ ABSL_GUARDED_BY(mu_);
  // The epoch after current_, once handed out early (overlap_epochs).
  std::optional<Epoch> next_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, Lease> leases_ ABSL_GUARDED_BY(mu_);
  // (deadline, id) of every lease in leases_ with a finite deadline, so
  // that expiry looks only at the leases that are due. Lease::deadline is
  // changed through SetDeadline alone.
  std::set<std::pair<absl::Time, int64_t>> by_deadline_ ABSL_GUARDED_BY(mu_);
  int64_t last_lease_id_ ABSL_GUARDED_BY(mu_);
  bool end_of_data_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<int64_t> sync_rounds_end_ ABSL_GUARDED_BY(mu_);
  // With sync_slots, one per slot; empty otherwise.
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_DATA_LEASE_MANAGER_H_
