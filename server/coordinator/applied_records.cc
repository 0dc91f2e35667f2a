#include "server/coordinator/applied_records.h"

#include <algorithm>

namespace pstrain {
namespace coordinator {
namespace {

using internal::Range;

// Sorted, overlapping and touching ranges merged, empty ones dropped.
std::vector<Range> Union(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (r.end <= r.begin) continue;
    if (!out.empty() && out.back().end >= r.begin) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

void AddTo(google::protobuf::RepeatedPtrField<RecordRange>* finished,
           const std::vector<Range>& more, int64_t num_records) {
  std::vector<Range> all;
  for (const RecordRange& r : *finished) all.push_back({r.begin(), r.end()});
  for (const Range& r : more) {
    all.push_back({std::max<int64_t>(0, r.begin), std::min(num_records, r.end)});
  }
  finished->Clear();
  for (const Range& r : Union(std::move(all))) {
    RecordRange* out = finished->Add();
    out->set_begin(r.begin);
    out->set_end(r.end);
  }
}

}  // namespace

AppliedRecords MergeLedgers(absl::Span<const PushLedger> ledgers) {
  std::map<int64_t, std::vector<Range>> ranges;
  AppliedRecords merged;
  for (const PushLedger& ledger : ledgers) {
    for (const LeaseProgress& lease : ledger.leases()) {
      if (lease.applied().empty()) continue;
      merged[lease.lease_id()].epoch = lease.epoch();
      for (const RecordSpan& r : lease.applied()) {
        ranges[lease.lease_id()].push_back({r.begin(), r.end()});
      }
    }
  }
  for (auto& [id, records] : merged) records.applied = Union(std::move(ranges[id]));
  return merged;
}

DataPosition WithAppliedRecords(const DataPosition& position, const AppliedRecords& applied) {
  std::vector<Range> current, next;
  for (const auto& [id, lease] : applied) {
    if (lease.epoch == position.epoch()) {
      current.insert(current.end(), lease.applied.begin(), lease.applied.end());
    } else if (lease.epoch == position.epoch() + 1) {
      next.insert(next.end(), lease.applied.begin(), lease.applied.end());
    }
  }
  DataPosition out = position;
  if (position.num_records() <= 0) return out;  // no data: nothing to count
  if (!current.empty()) AddTo(out.mutable_finished(), current, position.num_records());
  if (!next.empty()) AddTo(out.mutable_next_epoch_finished(), next, position.num_records());
  return out;
}

std::vector<RecordRange> AppliedWithin(const AppliedRecords& applied, int64_t lease_id,
                                       int64_t begin, int64_t end) {
  std::vector<RecordRange> out;
  auto it = applied.find(lease_id);
  if (it == applied.end()) return out;
  for (const Range& r : it->second.applied) {
    const int64_t b = std::max(begin, r.begin), e = std::min(end, r.end);
    if (b >= e) continue;
    RecordRange& range = out.emplace_back();
    range.set_begin(b);
    range.set_end(e);
  }
  return out;
}

}  // namespace coordinator
}  // namespace pstrain
