#ifndef PSTRAIN_SERVER_COORDINATOR_SHARD_GROUP_H_
#define PSTRAIN_SERVER_COORDINATOR_SHARD_GROUP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "protos/cluster.pb.h"
#include "protos/parameter_server.pb.h"
#include "server/coordinator/shard_client.h"

namespace pstrain {
namespace coordinator {

// The parameter-server shards of the running job, with a client of each
// process. Without replicas shard i is task ps/i. With hot-standby replicas
// (docs/design/replicas.md) shard i is served by two processes, first
// ps/i as its primary and ps/(size + i) as its backup; a failover promotes
// the backup, and a loss of the backup leaves the primary alone, each under
// a new fencing epoch of the shard. Calls that read or update the job's
// state (snapshots, ledgers, commits) go to primaries; those that set a run
// up (variables, restores, drops) go to every replica in the shard's chain.
// Thread-safe.
class ShardGroup {
 public:
  struct Shard {
    TaskId task;
    std::string address;
    std::unique_ptr<ShardClient> client;
  };

  // Where a task serves: its shard, and whether it is the primary now.
  struct Place {
    int shard = 0;
    bool primary = false;
  };

  // Shards without replicas.
  explicit ShardGroup(std::vector<Shard> shards);
  // `backups[i]` is shard i's backup; as many as `primaries`.
  ShardGroup(std::vector<Shard> primaries, std::vector<Shard> backups);

  ShardGroup(const ShardGroup&) = delete;
  ShardGroup& operator=(const ShardGroup&) = delete;

  int size() const { return size_; }
  bool replicated() const { return replicated_; }
  // Shard `index`'s primary now. The reference stays valid for the
  // group's life; after a failover it is no longer the primary.
  const Shard& shard(int index) const;
  // The primaries' addresses, index i = shard i.
  std::vector<std::string> addresses() const;
  // Raised by every change of a shard's replicas (Assignment.replica_epoch).
  uint64_t layout_epoch() const;

  // The shard `task` serves in the chain now; nullopt for a task that is
  // not in any shard's chain (never, or no longer).
  std::optional<Place> Find(const TaskId& task) const;
  // Shard `index`'s backup in the chain, or null.
  const Shard* backup(int index) const;

  // Shard `index`'s backup becomes its primary, alone, under the next
  // epoch; the old primary leaves the chain. Returns the new setup.
  // FailedPrecondition: the shard has no backup.
  absl::StatusOr<ReplicaSetup> Promote(int index);
  // Shard `index`'s primary goes on alone under the next epoch; its backup
  // leaves the chain. FailedPrecondition: the shard has no backup.
  absl::StatusOr<ReplicaSetup> DropBackup(int index);
  // Every shard back to its first layout (ps/i primary, ps/(size + i)
  // backup) under a new epoch: a rollback sets every replica up again.
  void Reset();

  // Rebuilding a backup (docs/design/replicas.md): shard `index`'s process
  // out of the chain (its lost replica, or the replacement at its
  // address), when the shard has no backup and rebuilds none; else null.
  const Shard* outsider(int index) const;
  struct Rebuild {
    uint64_t epoch = 0;
    const Shard* primary = nullptr;
    const Shard* backup = nullptr;
    // The backup's role, and the primary's with the backup.
    ReplicaSetup backup_setup;
    ReplicaSetup primary_setup;
  };
  // The outsider is rebuilt as shard `index`'s backup under the next
  // epoch; it joins the chain only with JoinBackup. FailedPrecondition:
  // the shard has a backup, no other process, or rebuilds one already.
  absl::StatusOr<Rebuild> BeginRebuild(int index);
  // The process being rebuilt as shard `index`'s backup, or null.
  const Shard* rebuilt(int index) const;
  // Whether shard `index` rebuilds its backup under `epoch` still (no
  // failover, rollback or abandon since).
  bool Rebuilding(int index, uint64_t epoch) const;
  // The rebuilt backup joins the chain. FailedPrecondition: not
  // Rebuilding(index, epoch).
  absl::Status JoinBackup(int index, uint64_t epoch);
  // The rebuild of `epoch` is given up: the primary goes on alone under
  // the next epoch, whose setup this returns. FailedPrecondition: not
  // Rebuilding(index, epoch).
  absl::StatusOr<ReplicaSetup> AbandonRebuild(int index, uint64_t epoch);

  // Calls fn(index, client) for every shard's primary at once, each on its
  // own thread, and waits for all of them. Returns OK, or the error of the
  // lowest failing shard with the shard named ("ps/1 at host:port: ...")
  // and how many others failed.
  absl::Status ForEach(const std::function<absl::Status(int index, ShardClient& client)>& fn) const;
  // Likewise for every process in every shard's chain, with its role.
  absl::Status ForEachReplica(
      const std::function<absl::Status(int index, const ReplicaSetup& setup,
                                       const Shard& process)>& fn) const;

  // Likewise for every process of every shard, in its chain or not (a
  // replaced primary may still hold the job): the shards' primaries first,
  // then, once every primary's call has returned, the other processes.
  // A job dropped from a backup first would leave its primary's pushes
  // waiting for acknowledgements that never come, and they may hold the
  // very threads the primary would serve its own drop on. Returns the
  // primaries' error if any, else the others'.
  absl::Status ForEachProcess(const std::function<absl::Status(const Shard& process)>& fn) const;

  // Cancels every call in progress and to come (shutdown).
  void CancelAll() const;

 private:
  struct Chain {
    // The shard's processes: [0] first primary, [1] first backup.
    std::vector<Shard> processes;
    int primary = 0;
    bool has_backup = false;
    // The other process is being rebuilt as the backup (not in the chain).
    bool rebuilding = false;
    uint64_t epoch = 1;
  };
  struct Call {
    int shard;
    const Shard* process;
    ReplicaSetup setup;
  };

  ReplicaSetup SetupLocked(const Chain& chain, bool primary) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Shard `index`'s chain if it rebuilds its backup under `epoch`, else
  // FailedPrecondition.
  absl::StatusOr<Chain*> RebuildingLocked(int index, uint64_t epoch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RunAll(const std::vector<Call>& calls,
                      const std::function<absl::Status(const Call& call)>& fn) const;

  const int size_;
  const bool replicated_;
  mutable absl::Mutex mu_;
  // Sized once; the Shard objects never move.
  std::vector<Chain> replicas_ ABSL_GUARDED_BY(mu_);
  uint64_t layout_epoch_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_SHARD_GROUP_H_
