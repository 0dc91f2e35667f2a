#ifndef PSTRAIN_SERVER_PS_REPLICA_APPLIER_H_
#define PSTRAIN_SERVER_PS_REPLICA_APPLIER_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/parameter_shard.h"
#include "server/ps/shard_metrics.h"

namespace pstrain {

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

  // Applies the entries of `request` after the last one applied (a resent
  // entry applied before is skipped) and returns the highest sequence
  // applied. A newer epoch than the backup's starts its sequences afresh.
  // FailedPrecondition REPLICA_FENCED: request.epoch is older than the
  //   backup's (its sender was replaced).
  // DataLoss: an entry out of sequence, malformed, or decided otherwise
  //   here than on the primary (a push not accepted, a commit refused):
  //   the replicas diverged. Entries before it stay applied.
  absl::StatusOr<uint64_t> Apply(ParameterShard& shard, const ReplicateRequest& request);

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

  mutable absl::Mutex mu_;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_);
  uint64_t applied_through_ ABSL_GUARDED_BY(mu_) = 0;
  ShardMetrics& metrics_;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_REPLICA_APPLIER_H_
