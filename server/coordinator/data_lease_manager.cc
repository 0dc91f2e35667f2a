#include "server/coordinator/data_lease_manager.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {

int64_t LeaseSizeFor(int64_t num_records, int num_workers, int64_t records_per_window) {
  constexpr int64_t kMin = 1024, kMax = 16384;
  const int64_t share = num_records / (4 * std::max<int64_t>(1, num_workers));
  const int64_t size = std::clamp(share, kMin, kMax);
  if (records_per_window <= 0) return size;
  return std::max<int64_t>(1, (size + records_per_window / 2) / records_per_window) *
         records_per_window;
}
namespace {

std::string RangeText(int64_t begin, int64_t end) {
  return absl::StrCat("[", begin, ", ", end, ")");
}

// What a worker that is to train no further gets.
DataLease EndOfDataLease() {
  DataLease lease;
  lease.set_end_of_data(true);
  return lease;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DataLeaseManager>> DataLeaseManager::Create(
    Clock& clock, DataLeaseOptions options) {
  if (options.num_records <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the training data must have records, got ", options.num_records));
  }
  if (options.chunk_size <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("records per lease must be > 0, got ", options.chunk_size));
  }
  if (options.epochs < 0) {
    return absl::InvalidArgumentError(absl::StrCat("epochs must be >= 0, got ", options.epochs));
  }
  if (options.lease_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("lease timeout must be > 0, got ",
                                                   absl::FormatDuration(options.lease_timeout)));
  }
  if (options.first_lease_id < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the first lease id must be >= 0, got ", options.first_lease_id));
  }
  if (options.sync_slots < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sync slots must be >= 0, got ", options.sync_slots));
  }
  if (options.sync_slots > 0 && options.records_per_batch <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("records per batch must be > 0 to deal leases to sync slots, got ",
                     options.records_per_batch));
  }
  if (options.first_lease_id == 0) {
    absl::BitGen random;
    options.first_lease_id = absl::Uniform<int64_t>(random, 1, int64_t{1} << 62);
  }
  return std::unique_ptr<DataLeaseManager>(new DataLeaseManager(clock, options));
}

DataLeaseManager::DataLeaseManager(Clock& clock, DataLeaseOptions options)
    : clock_(clock), options_(options), last_lease_id_(options.first_lease_id - 1) {
  absl::MutexLock lock(&mu_);
  current_ = FreshEpoch(0);
  slots_.resize(options_.sync_slots);
}

DataLeaseManager::Epoch DataLeaseManager::FreshEpoch(int32_t number) const {
  Epoch epoch;
  epoch.number = number;
  epoch.pending.push_back({0, options_.num_records});
  return epoch;
}

bool DataLeaseManager::IsLastEpoch(int32_t number) const {
  return options_.epochs > 0 && number + 1 >= options_.epochs;
}

DataLeaseManager::Epoch* DataLeaseManager::FindEpoch(int32_t number) {
  if (current_.number == number) return &current_;
  if (next_.has_value() && next_->number == number) return &*next_;
  return nullptr;
}

absl::StatusOr<std::pair<int32_t, internal::Range>> DataLeaseManager::CutRange(absl::Time now) {
  Epoch* epoch = &current_;
  if (epoch->pending.empty()) {
    if (!options_.overlap_epochs || IsLastEpoch(current_.number)) {
      return WithReason(absl::UnavailableError(absl::StrCat(
                            "every range of epoch ", current_.number, " is leased out (",
                            current_.leased, " leases outstanding); ask again")),
                        ERROR_REASON_NO_FREE_LEASE);
    }
    if (!next_.has_value()) next_ = FreshEpoch(current_.number + 1);
    epoch = &*next_;
    if (epoch->pending.empty()) {
      return WithReason(
          absl::UnavailableError(absl::StrCat(
              "every range of epochs ", current_.number, " and ", next_->number, " is leased out (",
              current_.leased + next_->leased, " leases outstanding); ask again")),
          ERROR_REASON_NO_FREE_LEASE);
    }
  }
  Range& front = epoch->pending.front();
  const Range range = {front.begin, std::min(front.end, front.begin + options_.chunk_size)};
  front.begin = range.end;
  if (front.size() == 0) epoch->pending.pop_front();
  ++epoch->leased;
  return std::make_pair(epoch->number, range);
}

absl::StatusOr<DataLease> DataLeaseManager::Acquire(absl::string_view holder) {
  if (holder.empty()) return absl::InvalidArgumentError("a data lease needs a holder");
  if (options_.sync_slots > 0) {
    return absl::InvalidArgumentError(
        "this job deals its data leases to sync slots; name the slot");
  }
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  ExpireLocked(now);
  if (end_of_data_) return EndOfDataLease();
  absl::StatusOr<std::pair<int32_t, Range>> cut = CutRange(now);
  if (!cut.ok()) return cut.status();
  Lease lease;
  lease.epoch = cut->first;
  lease.range = cut->second;
  lease.holder = std::string(holder);
  const int64_t id = ++last_lease_id_;
  auto [it, inserted] = leases_.emplace(id, std::move(lease));
  CHECK(inserted);
  SetDeadline(it, now + options_.lease_timeout);
  return ToProto(id, it->second);
}

absl::Status DataLeaseManager::DealToNextSlot(absl::Time now) {
  int next = 0;
  for (int i = 1; i < static_cast<int>(slots_.size()); ++i) {
    if (slots_[i].next_round < slots_[next].next_round) next = i;
  }
  absl::StatusOr<std::pair<int32_t, Range>> cut = CutRange(now);
  if (!cut.ok()) return cut.status();
  Slot& slot = slots_[next];
  Lease lease;
  lease.epoch = cut->first;
  lease.range = cut->second;
  lease.deadline = absl::InfiniteFuture();
  lease.slot = next;
  lease.first_round = slot.next_round;
  slot.next_round +=
      (lease.range.size() + options_.records_per_batch - 1) / options_.records_per_batch;
  const int64_t id = ++last_lease_id_;
  CHECK(leases_.emplace(id, std::move(lease)).second);
  slot.leases.push_back(id);
  return absl::OkStatus();
}

absl::StatusOr<DataLease> DataLeaseManager::AcquireForSlot(absl::string_view holder, int slot) {
  if (holder.empty()) return absl::InvalidArgumentError("a data lease needs a holder");
  if (options_.sync_slots == 0) {
    return absl::InvalidArgumentError("this job deals no data leases to sync slots");
  }
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (slot < 0 || slot >= static_cast<int>(slots_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("sync slot ", slot, " is outside [0, ", slots_.size(), ")"));
  }
  ExpireLocked(now);
  if (end_of_data_) return EndOfDataLease();
  while (slots_[slot].leases.empty()) {
    if (absl::Status dealt = DealToNextSlot(now); !dealt.ok()) {
      if (!absl::IsUnavailable(dealt) || !NothingLeftToDeal()) return dealt;
      // Its share ran out: rounds from its next on lack its batch.
      const int64_t end = slots_[slot].next_round;
      if (!sync_rounds_end_.has_value() || end < *sync_rounds_end_) sync_rounds_end_ = end;
      return EndOfDataLease();
    }
  }
  const int64_t id = slots_[slot].leases.front();
  auto it = leases_.find(id);
  CHECK(it != leases_.end()) << "slot " << slot << " lists lease " << id << ", which is gone";
  it->second.holder = std::string(holder);
  SetDeadline(it, now + options_.lease_timeout);
  return ToProto(id, it->second);
}

absl::Status DataLeaseManager::Complete(int64_t lease_id, absl::string_view holder,
                                        absl::Span<const RecordRange> returned) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  ExpireLocked(now);
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) {
    return WithReason(absl::NotFoundError(absl::StrCat(
                          "data lease ", lease_id,
                          " is unknown, completed or expired; its records were handed out again")),
                      ERROR_REASON_LEASE_UNKNOWN);
  }
  const Lease& lease = it->second;
  if (lease.holder != holder) {
    return WithReason(
        absl::NotFoundError(absl::StrCat("data lease ", lease_id, " is not held by ", holder)),
        ERROR_REASON_LEASE_UNKNOWN);
  }

  // Validate everything before changing anything.
  std::vector<Range> back;
  back.reserve(returned.size());
  for (const RecordRange& r : returned) back.push_back({r.begin(), r.end()});
  std::sort(back.begin(), back.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 0; i < back.size(); ++i) {
    const Range& r = back[i];
    if (r.begin >= r.end || r.begin < lease.range.begin || r.end > lease.range.end) {
      return absl::InvalidArgumentError(absl::StrCat(
          "returned range ", RangeText(r.begin, r.end), " is empty or outside data lease ",
          lease_id, " ", RangeText(lease.range.begin, lease.range.end)));
    }
    if (i > 0 && back[i - 1].end > r.begin) {
      return absl::InvalidArgumentError(
          absl::StrCat("returned ranges ", RangeText(back[i - 1].begin, back[i - 1].end), " and ",
                       RangeText(r.begin, r.end), " overlap"));
    }
  }

  Epoch* epoch = FindEpoch(lease.epoch);
  CHECK(epoch != nullptr) << "lease " << lease_id << " of epoch " << lease.epoch
                          << " outlived its epoch";
  internal::RangeSet returned_set;
  for (const Range& r : back) CHECK(returned_set.Add(r));
  for (const Range& done : returned_set.Gaps(lease.range)) {
    CHECK(epoch->finished.Add(done)) << "records " << RangeText(done.begin, done.end)
                                     << " of epoch " << lease.epoch << " finished twice";
  }
  // Ascending at the front, so the lowest returned record is handed out next.
  for (auto r = back.rbegin(); r != back.rend(); ++r) epoch->pending.push_front(*r);
  --epoch->leased;
  if (lease.slot >= 0) {
    std::deque<int64_t>& queue = slots_[lease.slot].leases;
    queue.erase(std::find(queue.begin(), queue.end(), lease_id));
  }
  Forget(it);
  Advance();
  return absl::OkStatus();
}

std::vector<DataLease> DataLeaseManager::ExpireLeases() {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  return ExpireLocked(now);
}

int DataLeaseManager::ReleaseHolder(absl::string_view holder) {
  absl::MutexLock lock(&mu_);
  std::vector<int64_t> ids;
  for (const auto& [id, lease] : leases_) {
    if (lease.holder == holder) ids.push_back(id);
  }
  // Newest first, so the oldest lease's range ends up at the very front.
  for (auto id = ids.rbegin(); id != ids.rend(); ++id) Requeue(leases_.find(*id));
  return static_cast<int>(ids.size());
}

std::vector<DataLease> DataLeaseManager::LeasesOf(absl::string_view holder) const {
  absl::MutexLock lock(&mu_);
  std::vector<DataLease> held;
  for (const auto& [id, lease] : leases_) {
    if (lease.holder == holder) held.push_back(ToProto(id, lease));
  }
  return held;
}

absl::Status DataLeaseManager::HandBackUntrained(int64_t lease_id, absl::string_view holder,
                                                 absl::Span<const RecordRange> trained) {
  Range range;
  {
    absl::MutexLock lock(&mu_);
    auto it = leases_.find(lease_id);
    if (it == leases_.end() || it->second.holder != holder) {
      return WithReason(
          absl::NotFoundError(absl::StrCat("data lease ", lease_id, " is not held by ", holder,
                                           "; its records were handed out again")),
          ERROR_REASON_LEASE_UNKNOWN);
    }
    if (it->second.slot >= 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("data lease ", lease_id,
                       " belongs to a sync slot; it waits whole for the slot's next holder"));
    }
    range = it->second.range;
  }
  std::vector<Range> done;
  for (const RecordRange& r : trained) {
    done.push_back({std::max(r.begin(), range.begin), std::min(r.end(), range.end)});
  }
  std::sort(done.begin(), done.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  internal::RangeSet trained_set;
  for (const Range& r : done) {
    if (r.begin >= r.end) continue;
    if (!trained_set.Add(r)) {
      return absl::InvalidArgumentError(absl::StrCat("trained range ", RangeText(r.begin, r.end),
                                                     " of data lease ", lease_id,
                                                     " overlaps another"));
    }
  }
  // Complete() re-queues the returned ranges and finishes the rest; nothing
  // else can complete this holder's lease meanwhile (its process is gone).
  std::vector<RecordRange> untrained;
  for (const Range& gap : trained_set.Gaps(range)) {
    RecordRange& r = untrained.emplace_back();
    r.set_begin(gap.begin);
    r.set_end(gap.end);
  }
  return Complete(lease_id, holder, untrained);
}

std::vector<DataLease> DataLeaseManager::ExpireLocked(absl::Time now) {
  // Only the leases past their deadline are looked at: every Acquire and
  // Complete comes here, and with thousands of workers holding leases a
  // walk over all of them made each call cost as much as the whole table.
  std::vector<int64_t> ids;
  for (auto due = by_deadline_.begin(); due != by_deadline_.end() && due->first <= now; ++due) {
    ids.push_back(due->second);
  }
  // In lease order, as they were handed out.
  std::sort(ids.begin(), ids.end());
  std::vector<DataLease> expired;
  expired.reserve(ids.size());
  for (int64_t id : ids) expired.push_back(ToProto(id, leases_.at(id)));
  // Newest first, so the oldest lease's range ends up at the very front.
  for (auto id = ids.rbegin(); id != ids.rend(); ++id) Requeue(leases_.find(*id));
  return expired;
}

void DataLeaseManager::SetDeadline(std::map<int64_t, Lease>::iterator it, absl::Time deadline) {
  Lease& lease = it->second;
  if (lease.deadline != absl::InfiniteFuture()) by_deadline_.erase({lease.deadline, it->first});
  lease.deadline = deadline;
  if (deadline != absl::InfiniteFuture()) by_deadline_.insert({deadline, it->first});
}

void DataLeaseManager::Forget(std::map<int64_t, Lease>::iterator it) {
  SetDeadline(it, absl::InfiniteFuture());
  leases_.erase(it);
}

void DataLeaseManager::Requeue(std::map<int64_t, Lease>::iterator it) {
  if (it->second.slot >= 0) {
    // The slot's rounds need exactly this data: it waits for the slot's
    // next holder.
    it->second.holder.clear();
    SetDeadline(it, absl::InfiniteFuture());
    return;
  }
  Epoch* epoch = FindEpoch(it->second.epoch);
  CHECK(epoch != nullptr) << "lease " << it->first << " outlived its epoch";
  epoch->pending.push_front(it->second.range);
  --epoch->leased;
  Forget(it);
}

void DataLeaseManager::Advance() {
  while (!end_of_data_ && current_.pending.empty() && current_.leased == 0) {
    CHECK_EQ(current_.finished.count(), options_.num_records)
        << "epoch " << current_.number << " ended without finishing every record";
    if (IsLastEpoch(current_.number)) {
      end_of_data_ = true;
      return;
    }
    const int32_t number = current_.number + 1;
    current_ = next_.has_value() ? *std::move(next_) : FreshEpoch(number);
    next_.reset();
  }
}

DataPosition DataLeaseManager::Position() const {
  absl::MutexLock lock(&mu_);
  DataPosition position;
  position.set_epoch(current_.number);
  position.set_num_records(options_.num_records);
  for (const Range& r : current_.finished.ranges()) {
    RecordRange* finished = position.add_finished();
    finished->set_begin(r.begin);
    finished->set_end(r.end);
  }
  if (next_.has_value() && !end_of_data_) {
    for (const Range& r : next_->finished.ranges()) {
      RecordRange* finished = position.add_next_epoch_finished();
      finished->set_begin(r.begin);
      finished->set_end(r.end);
    }
  }
  for (size_t s = 0; s < slots_.size(); ++s) {
    for (int64_t id : slots_[s].leases) {
      const Lease& lease = leases_.at(id);
      SlotLease* dealt = position.add_slot_leases();
      dealt->set_slot(static_cast<int32_t>(s));
      dealt->set_epoch(lease.epoch);
      dealt->mutable_range()->set_begin(lease.range.begin);
      dealt->mutable_range()->set_end(lease.range.end);
      dealt->set_first_round(lease.first_round);
    }
  }
  return position;
}

absl::Status DataLeaseManager::ValidateSlotLeases(const DataPosition& position) const {
  for (int i = 0; i < position.slot_leases_size(); ++i) {
    const SlotLease& dealt = position.slot_leases(i);
    const RecordRange& r = dealt.range();
    if (dealt.slot() < 0 || dealt.epoch() < 0 || dealt.first_round() < 0 ||
        r.begin() >= r.end() || r.begin() < 0 || r.end() > options_.num_records) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data position slot_leases[", i, "] (slot ", dealt.slot(), ", epoch ", dealt.epoch(),
          ", records ", RangeText(r.begin(), r.end()), ", first round ", dealt.first_round(),
          ") has a negative field or records outside [0, ", options_.num_records, ")"));
    }
  }
  return absl::OkStatus();
}

bool DataLeaseManager::TakeFromPending(Epoch& epoch, Range range) {
  for (auto it = epoch.pending.begin(); it != epoch.pending.end(); ++it) {
    if (it->begin > range.begin || it->end < range.end) continue;
    const Range before{it->begin, range.begin};
    const Range after{range.end, it->end};
    it = epoch.pending.erase(it);
    if (after.size() > 0) it = epoch.pending.insert(it, after);
    if (before.size() > 0) epoch.pending.insert(it, before);
    return true;
  }
  return false;
}

void DataLeaseManager::DealBackToSlots(const DataPosition& position, int64_t round) {
  for (const SlotLease& dealt : position.slot_leases()) {
    Epoch* epoch = FindEpoch(dealt.epoch());
    if (epoch == nullptr || dealt.slot() >= static_cast<int>(slots_.size())) continue;
    const Range range{dealt.range().begin(), dealt.range().end()};
    // What its batches of the rounds before the checkpoint did not train:
    // the lease's tail, from a batch boundary, once every batch before it
    // was applied. Anything else goes to the queue.
    const std::vector<Range> rest = epoch->finished.Gaps(range);
    if (rest.size() != 1 || rest[0].end != range.end) continue;
    const int64_t trained = rest[0].begin - range.begin;
    if (trained % options_.records_per_batch != 0) continue;
    const int64_t first_round = dealt.first_round() + trained / options_.records_per_batch;
    Slot& slot = slots_[dealt.slot()];
    if (first_round < std::max(round, slot.next_round) || !TakeFromPending(*epoch, rest[0])) {
      continue;
    }
    Lease lease;
    lease.epoch = epoch->number;
    lease.range = rest[0];
    lease.deadline = absl::InfiniteFuture();
    lease.slot = dealt.slot();
    lease.first_round = first_round;
    slot.next_round =
        first_round + (lease.range.size() + options_.records_per_batch - 1) /
                          options_.records_per_batch;
    const int64_t id = ++last_lease_id_;
    CHECK(leases_.emplace(id, std::move(lease)).second);
    slot.leases.push_back(id);
    ++epoch->leased;
  }
}

absl::StatusOr<DataLeaseManager::Epoch> DataLeaseManager::EpochFrom(
    int32_t number, const google::protobuf::RepeatedPtrField<RecordRange>& finished,
    absl::string_view field) const {
  Epoch epoch;
  epoch.number = number;
  for (int i = 0; i < finished.size(); ++i) {
    const RecordRange& r = finished.Get(i);
    if (r.begin() >= r.end() || r.begin() < 0 || r.end() > options_.num_records) {
      return absl::InvalidArgumentError(
          absl::StrCat("data position ", field, "[", i, "] ", RangeText(r.begin(), r.end()),
                       " is empty or outside [0, ", options_.num_records, ")"));
    }
    if (!epoch.finished.Add({r.begin(), r.end()})) {
      return absl::InvalidArgumentError(absl::StrCat("data position ", field, "[", i, "] ",
                                                     RangeText(r.begin(), r.end()),
                                                     " overlaps another"));
    }
  }
  for (const Range& gap : epoch.finished.Gaps({0, options_.num_records})) {
    epoch.pending.push_back(gap);
  }
  return epoch;
}

absl::Status DataLeaseManager::RestoreFrom(const DataPosition& position, int64_t round,
                                           std::optional<int> sync_slots) {
  if (sync_slots.has_value() && (options_.sync_slots == 0 || *sync_slots < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot deal to ", *sync_slots, " sync slots: the job ",
                     options_.sync_slots == 0 ? "deals no leases to slots" : "needs one at least"));
  }
  const bool fresh = position.num_records() == 0 && position.finished_size() == 0;
  if (!fresh && position.num_records() != options_.num_records) {
    return absl::FailedPreconditionError(
        absl::StrCat("the checkpoint's data position counts ", position.num_records(),
                     " records but the training data has ", options_.num_records,
                     "; the data changed since the checkpoint"));
  }
  if (position.epoch() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("data position epoch must be >= 0, got ", position.epoch()));
  }
  absl::StatusOr<Epoch> epoch = EpochFrom(position.epoch(), position.finished(), "finished");
  if (!epoch.ok()) return epoch.status();
  RETURN_IF_ERROR(ValidateSlotLeases(position));
  std::optional<Epoch> next;
  if (position.next_epoch_finished_size() > 0 && !IsLastEpoch(position.epoch())) {
    absl::StatusOr<Epoch> read =
        EpochFrom(position.epoch() + 1, position.next_epoch_finished(), "next_epoch_finished");
    if (!read.ok()) return read.status();
    next = *std::move(read);
  }

  absl::MutexLock lock(&mu_);
  leases_.clear();
  by_deadline_.clear();
  next_.reset();
  if (sync_slots.has_value()) slots_.assign(*sync_slots, Slot());
  for (Slot& slot : slots_) {
    slot.leases.clear();
    slot.next_round = round;
  }
  sync_rounds_end_.reset();
  if (options_.epochs > 0 && epoch->number >= options_.epochs) {
    current_ = FreshEpoch(options_.epochs - 1);
    current_.pending.clear();
    CHECK(current_.finished.Add({0, options_.num_records}));
    end_of_data_ = true;
    return absl::OkStatus();
  }
  current_ = *std::move(epoch);
  next_ = std::move(next);
  end_of_data_ = false;
  if (options_.sync_slots > 0) {
    DealBackToSlots(position, round);
    LOG(INFO) << "sync slots dealt again from round " << round << ": " << SlotsText();
  }
  Advance();
  return absl::OkStatus();
}

std::string DataLeaseManager::SlotsText() const {
  std::vector<std::string> slots;
  for (size_t s = 0; s < slots_.size(); ++s) {
    std::vector<std::string> leases;
    for (int64_t id : slots_[s].leases) {
      const Lease& lease = leases_.at(id);
      leases.push_back(absl::StrCat(RangeText(lease.range.begin, lease.range.end), " from round ",
                                    lease.first_round));
    }
    slots.push_back(absl::StrCat("slot ", s, " [", absl::StrJoin(leases, ", "), "]"));
  }
  return absl::StrJoin(slots, "; ");
}

bool DataLeaseManager::end_of_data() const {
  absl::MutexLock lock(&mu_);
  return end_of_data_;
}

std::optional<int64_t> DataLeaseManager::sync_rounds_end() const {
  absl::MutexLock lock(&mu_);
  return sync_rounds_end_;
}

bool DataLeaseManager::NothingLeftToDeal() const {
  // Slots keep the leases of lost holders, so nothing comes back to deal
  // but the ranges a stopping worker returns.
  const Epoch& newest = next_.has_value() ? *next_ : current_;
  return IsLastEpoch(newest.number) && newest.pending.empty() && current_.pending.empty();
}

DataLeaseStats DataLeaseManager::Stats() const {
  absl::MutexLock lock(&mu_);
  DataLeaseStats stats;
  stats.epoch = current_.number;
  stats.leases_outstanding = static_cast<int64_t>(leases_.size());
  stats.records_finished = current_.finished.count();
  stats.end_of_data = end_of_data_;
  return stats;
}

DataLease DataLeaseManager::ToProto(int64_t id, const Lease& lease) const {
  DataLease proto;
  proto.set_lease_id(id);
  proto.mutable_range()->set_begin(lease.range.begin);
  proto.mutable_range()->set_end(lease.range.end);
  proto.set_epoch(lease.epoch);
  proto.set_deadline_unix_ms(absl::ToUnixMillis(lease.deadline));
  if (lease.slot >= 0) proto.set_first_round(lease.first_round);
  return proto;
}

}  // namespace coordinator
}  // namespace pstrain
