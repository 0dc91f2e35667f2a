#include "server/ps/push_dedup.h"

#include <algorithm>
#include <vector>

#include "common/checkpoint/internal/byte_codec.h"

namespace pstrain {

PushDedup::Lookup PushDedup::Check(const PushKey& key) const {
  Lookup result;
  auto it = workers_.find(key.worker);
  if (it == workers_.end()) return result;
  const Worker& w = it->second;
  result.current_incarnation = w.incarnation;
  if (key.incarnation < w.incarnation) {
    result.verdict = Verdict::kOldIncarnation;
    return result;
  }
  if (key.incarnation > w.incarnation) return result;
  if (key.sequence < w.floor) {
    result.verdict = Verdict::kSeen;
    result.outcome = PUSH_OUTCOME_DUPLICATE;
    return result;
  }
  auto seq = w.recent.find(key.sequence);
  if (seq != w.recent.end()) {
    result.verdict = Verdict::kSeen;
    result.outcome = seq->second;
  }
  return result;
}

void PushDedup::Record(const PushKey& key, PushOutcome outcome) {
  Worker& w = workers_[key.worker];
  if (key.incarnation != w.incarnation) {
    w = Worker();
    w.incarnation = key.incarnation;
  }
  w.recent[key.sequence] = outcome;
  while (static_cast<int>(w.recent.size()) > window_) {
    w.floor = std::max(w.floor, w.recent.begin()->first + 1);
    w.recent.erase(w.recent.begin());
  }
}

void PushDedup::Forget(const PushKey& key) {
  auto it = workers_.find(key.worker);
  if (it == workers_.end() || it->second.incarnation != key.incarnation) return;
  it->second.recent.erase(key.sequence);
}

int64_t PushDedup::size() const {
  int64_t n = 0;
  for (const auto& [id, w] : workers_) n += static_cast<int64_t>(w.recent.size());
  return n;
}

std::string PushDedup::Serialize() const {
  // Sorted by worker so that equal states serialise to equal bytes.
  std::vector<int32_t> ids;
  for (const auto& [id, w] : workers_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  internal::ByteWriter out;
  out.PutU64(ids.size());
  for (int32_t id : ids) {
    const Worker& w = workers_.at(id);
    out.PutU32(static_cast<uint32_t>(id));
    out.PutU64(w.incarnation);
    out.PutU64(w.floor);
    out.PutU64(w.recent.size());
    for (const auto& [seq, outcome] : w.recent) {
      out.PutU64(seq);
      out.PutU32(static_cast<uint32_t>(outcome));
    }
  }
  return out.Release();
}

absl::StatusOr<PushDedup> PushDedup::Parse(absl::string_view bytes, int window) {
  PushDedup dedup(window);
  internal::ByteReader in(bytes);
  uint64_t workers = 0;
  const absl::Status bad = absl::DataLossError("dedup state does not decode");
  if (!in.GetU64(&workers)) return bad;
  for (uint64_t i = 0; i < workers; ++i) {
    uint32_t id;
    uint64_t n;
    Worker w;
    if (!in.GetU32(&id) || !in.GetU64(&w.incarnation) || !in.GetU64(&w.floor) || !in.GetU64(&n)) {
      return bad;
    }
    if (n > in.remaining() / 12) return bad;
    for (uint64_t j = 0; j < n; ++j) {
      uint64_t seq;
      uint32_t outcome;
      if (!in.GetU64(&seq) || !in.GetU32(&outcome) || !PushOutcome_IsValid(outcome)) return bad;
      w.recent[seq] = static_cast<PushOutcome>(outcome);
    }
    dedup.workers_[static_cast<int32_t>(id)] = std::move(w);
  }
  if (in.remaining() != 0) return bad;
  return dedup;
}

bool operator==(const PushDedup& a, const PushDedup& b) { return a.workers_ == b.workers_; }

}  // namespace pstrain
