#include "server/ps/push_ledger.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/random/split_mix.h"

namespace pstrain {
namespace {

// Ends the ledger trailer of an exactly-once record: [ledger bytes]
// [ledger size, 8 bytes little-endian][this magic].
constexpr char kTrailerMagic[8] = {'P', 'S', 'L', 'E', 'D', 'G', 'R', '1'};
constexpr size_t kTrailerFixed = 16;

}  // namespace

PushSource PushSourceOf(const PushRequest& push) {
  PushSource source;
  source.examples = push.examples();
  if (push.has_origin()) {
    absl::StatusOr<LeaseSlice> origin = LeaseSliceFromProto(push.origin());
    if (origin.ok()) source.origin = *origin;
  }
  return source;
}

absl::StatusOr<LeaseSlice> LeaseSliceFromProto(const PushOrigin& origin) {
  if (origin.lease_id() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("origin.lease_id must be > 0, got ", origin.lease_id()));
  }
  if (origin.epoch() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("origin.epoch must be >= 0, got ", origin.epoch()));
  }
  const RecordSpan& r = origin.records();
  if (r.begin() < 0 || r.end() <= r.begin()) {
    return absl::InvalidArgumentError(absl::StrCat("origin.records [", r.begin(), ", ", r.end(),
                                                   ") is empty, reversed or negative"));
  }
  return LeaseSlice{origin.lease_id(), origin.epoch(), r.begin(), r.end()};
}

AppliedPushLedger::AppliedPushLedger(uint64_t generation, int max_leases)
    : generation_(generation), max_leases_(std::max(1, max_leases)) {}

uint64_t AppliedPushLedger::PushDigest(const PushKey& key) {
  return SplitMix64(SplitMix64(SplitMix64(static_cast<uint32_t>(key.worker)) ^ key.incarnation) ^
                    key.sequence);
}

bool AppliedPushLedger::Sealed(int64_t lease_id) const {
  auto it = leases_.find(lease_id);
  return it != leases_.end() && it->second.sealed;
}

AppliedPushLedger::Lease& AppliedPushLedger::Touch(int64_t lease_id, int32_t epoch) {
  auto [it, inserted] = leases_.try_emplace(lease_id);
  if (inserted) {
    it->second.epoch = epoch;
    order_.push_back(lease_id);
    while (static_cast<int>(order_.size()) > max_leases_) {
      leases_.erase(order_.front());
      order_.pop_front();
    }
  }
  return leases_.at(lease_id);
}

void AppliedPushLedger::AddRange(Lease& lease, int64_t begin, int64_t end) {
  auto& ranges = lease.applied;
  auto it = std::lower_bound(
      ranges.begin(), ranges.end(), begin,
      [](const std::pair<int64_t, int64_t>& r, int64_t b) { return r.second < b; });
  // `it` is the first range that ends at or after `begin`: merge every
  // range touching [begin, end) into one.
  auto last = it;
  while (last != ranges.end() && last->first <= end) {
    begin = std::min(begin, last->first);
    end = std::max(end, last->second);
    ++last;
  }
  it = ranges.erase(it, last);
  ranges.insert(it, {begin, end});
}

void AppliedPushLedger::RecordApplied(const PushKey& key, int64_t examples,
                                      const std::optional<LeaseSlice>& origin) {
  ++applied_pushes_;
  applied_examples_ += examples;
  applied_digest_ += PushDigest(key);  // wraps: a sum modulo 2^64
  if (origin.has_value()) {
    AddRange(Touch(origin->lease_id, origin->epoch), origin->begin, origin->end);
  }
}

LeaseProgress AppliedPushLedger::ProgressOf(int64_t lease_id) const {
  LeaseProgress progress;
  progress.set_lease_id(lease_id);
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return progress;
  progress.set_epoch(it->second.epoch);
  progress.set_sealed(it->second.sealed);
  for (const auto& [begin, end] : it->second.applied) {
    RecordSpan* r = progress.add_applied();
    r->set_begin(begin);
    r->set_end(end);
  }
  return progress;
}

PushLedger AppliedPushLedger::Read(absl::Span<const int64_t> lease_ids, LedgerRead read) {
  PushLedger out;
  out.set_generation(generation_);
  out.set_applied_pushes(applied_pushes_);
  out.set_applied_examples(applied_examples_);
  out.set_applied_digest(applied_digest_);
  if (lease_ids.empty()) {
    for (int64_t id : order_) *out.add_leases() = ProgressOf(id);
    return out;
  }
  for (int64_t id : lease_ids) {
    // A sealed lease never seen is remembered too: a push of it still on
    // its way must be refused.
    if (read == LedgerRead::kSeal) Touch(id, 0).sealed = true;
    *out.add_leases() = ProgressOf(id);
  }
  return out;
}

PushLedger AppliedPushLedger::ToProto() const {
  PushLedger out;
  out.set_generation(generation_);
  out.set_applied_pushes(applied_pushes_);
  out.set_applied_examples(applied_examples_);
  out.set_applied_digest(applied_digest_);
  for (int64_t id : order_) *out.add_leases() = ProgressOf(id);
  return out;
}

absl::StatusOr<AppliedPushLedger> AppliedPushLedger::FromProto(const PushLedger& proto,
                                                               uint64_t generation,
                                                               int max_leases) {
  AppliedPushLedger ledger(generation, max_leases);
  ledger.applied_pushes_ = proto.applied_pushes();
  ledger.applied_examples_ = proto.applied_examples();
  ledger.applied_digest_ = proto.applied_digest();
  for (const LeaseProgress& progress : proto.leases()) {
    if (ledger.leases_.count(progress.lease_id()) > 0) {
      return absl::DataLossError(
          absl::StrCat("push ledger lists lease ", progress.lease_id(), " twice"));
    }
    Lease& lease = ledger.Touch(progress.lease_id(), progress.epoch());
    lease.sealed = progress.sealed();
    int64_t previous_end = -1;
    for (const RecordSpan& r : progress.applied()) {
      if (r.begin() >= r.end() || r.begin() <= previous_end) {
        return absl::DataLossError(absl::StrCat("push ledger lease ", progress.lease_id(),
                                                " has a bad range [", r.begin(), ", ", r.end(),
                                                ")"));
      }
      lease.applied.emplace_back(r.begin(), r.end());
      previous_end = r.end();
    }
  }
  return ledger;
}

std::string EncodeExactlyOnceRecord(absl::string_view dedup, const PushLedger& ledger) {
  std::string out(dedup);
  const std::string bytes = ledger.SerializeAsString();
  out += bytes;
  uint64_t size = bytes.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  out.append(kTrailerMagic, sizeof(kTrailerMagic));
  return out;
}

absl::StatusOr<ExactlyOnceRecord> DecodeExactlyOnceRecord(absl::string_view bytes) {
  ExactlyOnceRecord record;
  record.dedup = bytes;
  if (bytes.size() < kTrailerFixed ||
      std::memcmp(bytes.data() + bytes.size() - sizeof(kTrailerMagic), kTrailerMagic,
                  sizeof(kTrailerMagic)) != 0) {
    return record;  // written before the ledger existed
  }
  uint64_t size = 0;
  const size_t size_at = bytes.size() - kTrailerFixed;
  for (int i = 0; i < 8; ++i) {
    size |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[size_at + i])) << (8 * i);
  }
  if (size > size_at) return absl::DataLossError("push ledger trailer is longer than its record");
  const absl::string_view ledger = bytes.substr(size_at - size, size);
  if (!record.ledger.ParseFromArray(ledger.data(), static_cast<int>(ledger.size()))) {
    return absl::DataLossError("push ledger does not decode");
  }
  record.dedup = bytes.substr(0, size_at - size);
  return record;
}

}  // namespace pstrain
