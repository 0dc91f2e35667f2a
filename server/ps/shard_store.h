#ifndef PSTRAIN_SERVER_PS_SHARD_STORE_H_
#define PSTRAIN_SERVER_PS_SHARD_STORE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/posix_env.h"
#include "common/clock/clock.h"
#include "common/net/channel_security.h"
#include "prometheus/registry.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/parameter_shard.h"
#include "server/ps/push_assembler.h"
#include "server/ps/replica_applier.h"
#include "server/ps/replica_forwarder.h"
#include "server/ps/shard_metrics.h"

namespace pstrain {

struct ShardStoreOptions {
  ShardOptions shard;
  PushAssemblerOptions pushes;
  // Snapshot and Restore paths must lie under this folder (relative paths
  // are taken from it). Empty: Snapshot and Restore are refused.
  std::string checkpoint_root;
  // The filesystem snapshots are written to and restored from; borrowed,
  // must outlive the store. Default (null): the local filesystem.
  Env* env = nullptr;
  // How a primary dials its backup (docs/design/replicas.md). Default:
  // plaintext, no token.
  ChannelSecurity replica_security;
};

// Everything a parameter-server process holds: the one job it serves at a
// time (a ParameterShard), the pushes being assembled, checkpoint files, and
// the metrics. The gRPC service is a thin adapter over it. Thread-safe.
class ShardStore {
 public:
  // `clock` and `registry` are borrowed and must outlive the store.
  ShardStore(ShardStoreOptions options, Clock& clock, prometheus::Registry& registry);
  ~ShardStore();

  ShardStore(const ShardStore&) = delete;
  ShardStore& operator=(const ShardStore&) = delete;

  // Sets up a job's variables on this shard. Repeating the same request is
  // harmless (it answers the current version). A request of a greater
  // generation (CreateVariablesRequest.generation) replaces the job's
  // variables: the old run is shut down as DropJob would.
  // InvalidArgument: see ParameterShard::Create.
  // AlreadyExists: the job is set up here with other variables or settings.
  // FailedPrecondition: another job is running here (drop it first), or a
  //   newer generation of this one.
  // ResourceExhausted: the variables exceed the shard's byte limit.
  // With request.replica (hot-standby replicas): a PRIMARY forwards every
  // decision to its backup_address (none: it goes on alone) and
  // acknowledges it once the backup applied it; a BACKUP applies what its
  // primary forwards (Replicate) and refuses workers' calls. InvalidArgument:
  // a role without an epoch > 0, a BACKUP with a backup_address, or an
  // epoch or address without a role.
  absl::StatusOr<CreateVariablesResponse> CreateVariables(const CreateVariablesRequest& request);

  // Drops the job: waiting reads end with FailedPrecondition, later pushes
  // for it are refused. Dropping a job that is not here (or a run newer
  // than request.up_to_generation) succeeds, so that retries are harmless.
  // InvalidArgument: empty job_id.
  absl::Status DropJob(const DropJobRequest& request);

  // The running job named `job_id`, of run `generation` (0: any), for a
  // worker's or a checkpoint's call: only a primary (or a shard without
  // replicas) serves them.
  // InvalidArgument: empty job_id.
  // FailedPrecondition: no job, or another job, or another run of the job
  //   is running on this shard; NOT_PRIMARY: this replica is a backup, or a
  //   primary that its backup refused (it was replaced).
  absl::StatusOr<std::shared_ptr<ParameterShard>> GetJob(absl::string_view job_id,
                                                         uint64_t generation = 0) const;

  // The job running here, or null: for heartbeats, which report its step.
  std::shared_ptr<ParameterShard> current_job() const;

  // Writes the job's snapshot to request.path (under the checkpoint root).
  // InvalidArgument: a path outside the root, or no root configured.
  // FailedPrecondition: the job is not running. The Env's errors when the
  // file cannot be written.
  absl::StatusOr<SnapshotResponse> Snapshot(const SnapshotRequest& request);

  // Replaces the job's state with a snapshot file, on a primary or a
  // backup alike (both restore the same file); the replication log starts
  // empty again on both (entries a primary had not had acknowledged are
  // answered as if it went on alone: the restore replaced their effect).
  // InvalidArgument / FailedPrecondition as Snapshot; NotFound: no file;
  // DataLoss: truncated or damaged (naming the record), or not what the
  // manifest says; FailedPrecondition: a snapshot of other variables or
  // another shard layout.
  absl::StatusOr<RestoreResponse> Restore(const RestoreRequest& request);

  // The job's push ledger (ParameterShard::ReadLedger), sealing
  // request.lease_ids when request.seal.
  // InvalidArgument: empty job_id, a lease id <= 0, or seal without lease
  //   ids. FailedPrecondition: the job is not running.
  absl::StatusOr<PushLedger> ReadPushLedger(const ReadPushLedgerRequest& request);

  // Applies a sync round's members on run request.generation of the job
  // (0: any run), as ParameterShard::CommitRound does.
  // InvalidArgument: empty job_id, no member, a malformed member or two of
  //   one rank. FailedPrecondition JOB_ENDED: the job is not running here;
  //   RUN_ROLLED_BACK: another run of it is. The shard's other codes.
  absl::StatusOr<CommitRoundResponse> CommitRound(const CommitRoundRequest& request);

  // Backup: takes a primary's state and entries (ReplicaApplier::Apply)
  // and returns how far it is.
  // FailedPrecondition JOB_ENDED / RUN_ROLLED_BACK: as GetJob;
  //   REPLICA_FENCED: an older epoch than this replica's, or this replica
  //   was never a backup of the job.
  // DataLoss: the replicas diverged (see ReplicaApplier::Apply).
  absl::StatusOr<ReplicaProgress> Replicate(const ReplicateRequest& request);

  // Changes this replica's role or backup (ChangeReplicaRequest):
  // a BACKUP promoted to PRIMARY stops taking its old primary's entries
  // and serves workers; a PRIMARY without backup_address goes on alone
  // (waiting acknowledgements are answered); a PRIMARY given a
  // backup_address rebuilds that backup (it must hold the job's variables
  // as a BACKUP of the same epoch): at the next sync-round boundary, no
  // later than `deadline`, it copies its state, which goes to the backup
  // ahead of every later decision, and the backup joins once it has caught
  // up (ChangeReplicaResponse.backup_joined). The setup the replica holds,
  // asked again: its progress, nothing changed.
  // FailedPrecondition JOB_ENDED / RUN_ROLLED_BACK: as GetJob;
  //   REPLICA_FENCED: an epoch not above the replica's, or this setup's
  //   rebuild failed (the backup refused the primary: it was promoted);
  //   without a reason: a PRIMARY made a BACKUP, a BACKUP made a PRIMARY
  //   with a backup of its own, or a job without replicas.
  // InvalidArgument: no role, or a BACKUP with a backup_address.
  // Unavailable: no sync-round boundary came by `deadline`; nothing changed.
  absl::StatusOr<ChangeReplicaResponse> ChangeReplica(
      const ChangeReplicaRequest& request, absl::Time deadline = absl::InfiniteFuture());

  // The job's replica setup (role unset: no replicas or no job).
  ReplicaSetup replica() const;

  PushAssembler& pushes() { return pushes_; }
  const PushAssembler& pushes() const { return pushes_; }
  ShardMetrics& metrics() { return metrics_; }
  Clock& clock() { return clock_; }

 private:
  // GetJob whatever this replica's role.
  absl::StatusOr<std::shared_ptr<ParameterShard>> FindJob(absl::string_view job_id,
                                                          uint64_t generation) const
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<std::shared_ptr<ParameterShard>> FindJobLocked(absl::string_view job_id,
                                                                uint64_t generation) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets up `setup` for `shard`: its forwarder or its applier. The
  // forwarder it replaces, to be stopped without mu_.
  std::shared_ptr<ReplicaForwarder> SetUpReplicaLocked(const ReplicaSetup& setup,
                                                       ParameterShard& shard)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::string> ResolvePath(absl::string_view path) const;
  // How this primary forwards to the backup of `setup`.
  ReplicaForwarderOptions ForwarderOptions(const ReplicaSetup& setup,
                                           const ParameterShard& shard) const;
  // ChangeReplica of a primary given a new backup.
  absl::StatusOr<ChangeReplicaResponse> RebuildBackup(const ChangeReplicaRequest& request,
                                                      std::shared_ptr<ParameterShard> shard,
                                                      absl::Time deadline);
  // ChangeReplica of the setup held: the rebuild's progress.
  ChangeReplicaResponse ProgressLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const ShardStoreOptions options_;
  PosixEnv posix_env_;
  Env& env_;
  Clock& clock_;
  ShardMetrics metrics_;
  PushAssembler pushes_;

  mutable absl::Mutex mu_;
  std::shared_ptr<ParameterShard> job_ ABSL_GUARDED_BY(mu_);
  // The job's replica role; a primary's forwarder (null: no backup) or a
  // backup's (or a promoted backup's) applier.
  ReplicaSetup replica_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<ReplicaForwarder> forwarder_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<ReplicaApplier> applier_ ABSL_GUARDED_BY(mu_);
  // The bytes of state sent to the backup being rebuilt (0: none).
  int64_t state_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_SHARD_STORE_H_
