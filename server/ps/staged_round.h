#ifndef PSTRAIN_SERVER_PS_STAGED_ROUND_H_
#define PSTRAIN_SERVER_PS_STAGED_ROUND_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "server/ps/gradient_copy.h"
#include "server/ps/push_dedup.h"
#include "server/ps/push_ledger.h"

namespace pstrain {

// One push of an agreed sync round, kept until the round is committed.
struct StagedPush {
  PushKey key;
  PushSource source;
  GradientCopy gradients;
};

// The pushes a shard holds for the open round of agreed sync rounds
// (docs/design/sync_rounds.md): at most one per worker rank, each with a
// copy of its gradients, until the coordinator commits the round with some
// of them and the rest are dropped. Memory: at most one push per rank. Not
// thread-safe (the shard guards it with its own lock).
class StagedRound {
 public:
  // Ranks 0 .. num_workers - 1.
  explicit StagedRound(int num_workers);

  // InvalidArgument unless `members` (of a commit, from the network) are
  // at least one push, each of a distinct rank in range, with incarnation
  // and sequence > 0.
  static absl::Status ValidateMembers(absl::Span<const PushKey> members, int num_workers);

  StagedRound(const StagedRound&) = delete;
  StagedRound& operator=(const StagedRound&) = delete;

  // The push staged for `worker`'s rank, or null. `worker` in range.
  const StagedPush* Find(int worker) const;
  // Whether exactly `key` is staged (its rank in range or not).
  bool Holds(const PushKey& key) const;

  // Stages `push` in its rank's slot (in range), replacing what was there:
  // the caller decides that a push may replace the staged one (a newer
  // incarnation of the rank). The key of the push replaced, if any.
  std::optional<PushKey> Put(StagedPush push);

  // Takes the pushes `members` out (each must be staged: Holds), in rank
  // order whatever their order in `members`, and drops every other push,
  // adding their keys to `dropped`: the round is over.
  std::vector<StagedPush> Commit(absl::Span<const PushKey> members, std::vector<PushKey>* dropped);

  // Drops the pushes whose data came from one of `lease_ids` (their leases
  // were handed back); their keys.
  std::vector<PushKey> DropLeases(absl::Span<const int64_t> lease_ids);

  // Drops every push; their keys.
  std::vector<PushKey> Clear();

  // The keys staged, in rank order.
  std::vector<PushKey> keys() const;
  // Whether no push is staged.
  bool empty() const;

 private:
  // By rank.
  std::vector<std::optional<StagedPush>> slots_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_STAGED_ROUND_H_
