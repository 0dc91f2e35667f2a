#ifndef PSTRAIN_SERVER_PS_REPLICA_APPLIER_H_
#define PSTRAIN_SERVER_PS_REPLICA_APPLIER_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/parameter_shard.h"
#include "server/ps/shard_metrics.h"

namespace pstrain {

// How far a backup is: answered on each Replicate request.
struct ReplicaProgress {
  uint64_t applied_through = 0;
  // It holds the state its epoch's stream began with (a rebuilt backup).
  bool holds_state = false;
};

// A backup's side of replication: takes its primary's decisions
// (ReplicateRequest entries) through the same ParameterShard calls, one at
// a time in sequence order, so that it reaches the same state. Checks that
// depend on the moment (a worker's membership deadline) were the
// primary's and are not made again: entries go to the shard directly.
// Thread-safe; entries of concurrent streams are applied one at a time.
class ReplicaApplier {
 public:
  // `epoch`: the backup's fencing epoch (ReplicaSetup.epoch).
  ReplicaApplier(uint64_t epoch, ShardMetrics& metrics) : epoch_(epoch), metrics_(metrics) {}

  ReplicaApplier(const ReplicaApplier&) = delete;
  ReplicaApplier& operator=(const ReplicaApplier&) = delete;

  // Takes a piece of a rebuilt backup's state (request.state: once whole,
  // it replaces the shard's), then applies the entries of `request` after
  // the last one applied (a resent entry applied before is skipped).
  // Returns how far the backup is. A newer epoch than the backup's starts
  // its sequences afresh.
  // FailedPrecondition REPLICA_FENCED: request.epoch is older than the
  //   backup's (its sender was replaced).
  // DataLoss: an entry out of sequence, malformed, or decided otherwise
  //   here than on the primary (a push not accepted, a commit refused):
  //   the replicas diverged. Entries before it stay applied. Also a state
  //   piece out of order, or a state that does not restore (damaged, of
  //   other variables).
  absl::StatusOr<ReplicaProgress> Apply(ParameterShard& shard, const ReplicateRequest& request);

  // Raises the epoch (a promotion, or a new backup epoch), after any entry
  // being applied: older streams are refused from now on. FailedPrecondition
  // REPLICA_FENCED: `epoch` is not above the current one.
  absl::Status RaiseEpoch(uint64_t epoch);

  // Forgets the applied sequence: the shard was restored, both replicas
  // start from the same state with an empty log.
  void Reset();

  uint64_t epoch() const;
  uint64_t applied_through() const;

 private:
  absl::Status ApplyEntry(ParameterShard& shard, const ReplicaEntry& entry);
  absl::Status TakeStatePiece(ParameterShard& shard, const ReplicaState& piece)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_);
  uint64_t applied_through_ ABSL_GUARDED_BY(mu_) = 0;
  // A rebuilt backup's state as it arrives, and whether it was restored in
  // this epoch.
  std::string state_ ABSL_GUARDED_BY(mu_);
  bool holds_state_ ABSL_GUARDED_BY(mu_) = false;
  ShardMetrics& metrics_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_REPLICA_APPLIER_H_
