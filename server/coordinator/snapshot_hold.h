#ifndef PSTRAIN_SERVER_COORDINATOR_SNAPSHOT_HOLD_H_
#define PSTRAIN_SERVER_COORDINATOR_SNAPSHOT_HOLD_H_

namespace pstrain {
namespace coordinator {

// What must stand still while a checkpoint's shards snapshot, so that every
// shard's file holds the same updates: agreed sync rounds commit none
// meanwhile (RoundKeeper). JobCheckpointer holds it around the snapshots.
// Implementations are thread-safe.
class SnapshotHold {
 public:
  virtual ~SnapshotHold() = default;

  // Returns once nothing that changes the shards is under way, and keeps it
  // so until Release().
  virtual void Hold() = 0;
  // Ends Hold(); what waited for it goes on.
  virtual void Release() = 0;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_SNAPSHOT_HOLD_H_
