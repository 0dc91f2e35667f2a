#ifndef PSTRAIN_SERVER_PS_UPDATE_LOG_H_
#define PSTRAIN_SERVER_PS_UPDATE_LOG_H_

#include <cstdint>

#include "absl/status/status.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// Where a primary ParameterShard writes each decision that changes its
// state (a push applied, joining a sync round or staged; a round
// committed; leases sealed), in the order it takes them, so that its
// backup can take the same decisions (docs/design/replicas.md). The shard
// acknowledges a decision only once AwaitReplicated says the backup has
// it. Implementations are thread-safe.
class UpdateLog {
 public:
  virtual ~UpdateLog() = default;

  // Queues `entry` (its sequence is set here: 1, 2, ...) and returns its
  // ticket for AwaitReplicated. Called under the shard's lock, in decision
  // order: never blocks, and takes the entry by move (its gradients were
  // copied before the lock was taken).
  virtual uint64_t Append(ReplicaEntry entry) = 0;

  // Blocks until the backup has applied the entry of `ticket` (and every
  // one before it): OK. Without the lock. An error (FailedPrecondition
  // NOT_PRIMARY: the backup was promoted and refuses this primary;
  // JOB_ENDED: the job was dropped) means the entry may never reach the
  // backup: the shard acknowledges nothing more.
  virtual absl::Status AwaitReplicated(uint64_t ticket) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_UPDATE_LOG_H_
