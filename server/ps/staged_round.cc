#include "server/ps/staged_round.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace pstrain {

StagedRound::StagedRound(int num_workers) : slots_(std::max(0, num_workers)) {}

absl::Status StagedRound::ValidateMembers(absl::Span<const PushKey> members, int num_workers) {
  if (members.empty()) return absl::InvalidArgumentError("a round needs at least one member");
  std::vector<bool> seen(std::max(0, num_workers));
  for (const PushKey& m : members) {
    const bool valid =
        m.worker >= 0 && m.worker < num_workers && m.incarnation > 0 && m.sequence > 0;
    if (!valid || seen[m.worker]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "members must be pushes of distinct worker ranks in [0, ", num_workers,
          ") with incarnation and sequence > 0; got worker ", m.worker, " incarnation ",
          m.incarnation, " sequence ", m.sequence, valid ? " twice" : ""));
    }
    seen[m.worker] = true;
  }
  return absl::OkStatus();
}

const StagedPush* StagedRound::Find(int worker) const {
  const std::optional<StagedPush>& slot = slots_.at(worker);
  return slot.has_value() ? &*slot : nullptr;
}

bool StagedRound::Holds(const PushKey& key) const {
  if (key.worker < 0 || key.worker >= static_cast<int>(slots_.size())) return false;
  const StagedPush* staged = Find(key.worker);
  return staged != nullptr && staged->key == key;
}

std::optional<PushKey> StagedRound::Put(StagedPush push) {
  std::optional<StagedPush>& slot = slots_.at(push.key.worker);
  std::optional<PushKey> replaced;
  if (slot.has_value()) replaced = slot->key;
  slot = std::move(push);
  return replaced;
}

std::vector<StagedPush> StagedRound::Commit(absl::Span<const PushKey> members,
                                            std::vector<PushKey>* dropped) {
  std::vector<StagedPush> taken;
  for (std::optional<StagedPush>& slot : slots_) {
    if (!slot.has_value()) continue;
    const bool member = std::find(members.begin(), members.end(), slot->key) != members.end();
    if (member) {
      taken.push_back(*std::move(slot));
    } else {
      dropped->push_back(slot->key);
    }
    slot.reset();
  }
  CHECK_EQ(taken.size(), members.size()) << "a committed round's member is not staged";
  return taken;
}

std::vector<PushKey> StagedRound::DropLeases(absl::Span<const int64_t> lease_ids) {
  std::vector<PushKey> dropped;
  for (std::optional<StagedPush>& slot : slots_) {
    if (!slot.has_value() || !slot->source.origin.has_value()) continue;
    const int64_t lease = slot->source.origin->lease_id;
    if (std::find(lease_ids.begin(), lease_ids.end(), lease) == lease_ids.end()) continue;
    dropped.push_back(slot->key);
    slot.reset();
  }
  return dropped;
}

std::vector<PushKey> StagedRound::Clear() {
  std::vector<PushKey> dropped = keys();
  for (std::optional<StagedPush>& slot : slots_) slot.reset();
  return dropped;
}

std::vector<PushKey> StagedRound::keys() const {
  std::vector<PushKey> keys;
  for (const std::optional<StagedPush>& slot : slots_) {
    if (slot.has_value()) keys.push_back(slot->key);
  }
  return keys;
}

bool StagedRound::empty() const {
  for (const std::optional<StagedPush>& slot : slots_) {
    if (slot.has_value()) return false;
  }
  return true;
}

}  // namespace pstrain
