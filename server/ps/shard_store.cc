#include "server/ps/shard_store.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/checkpoint/env.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "google/protobuf/util/message_differencer.h"
#include "server/ps/shard_snapshot.h"

namespace pstrain {
namespace {

absl::Status JobEnded(absl::string_view job_id) {
  return WithReason(absl::FailedPreconditionError(
                        absl::StrCat("job ", job_id, " was dropped from this shard")),
                    ERROR_REASON_JOB_ENDED);
}

absl::Status ValidateReplica(const ReplicaSetup& setup) {
  if (setup.role() == REPLICA_ROLE_UNSPECIFIED) {
    if (setup.epoch() != 0 || !setup.backup_address().empty()) {
      return absl::InvalidArgumentError("replica: an epoch or backup_address without a role");
    }
    return absl::OkStatus();
  }
  if (!ReplicaRole_IsValid(setup.role())) {
    return absl::InvalidArgumentError("replica.role is unknown");
  }
  if (setup.epoch() == 0) return absl::InvalidArgumentError("replica.epoch must be > 0");
  if (setup.role() == REPLICA_ROLE_BACKUP && !setup.backup_address().empty()) {
    return absl::InvalidArgumentError("replica.backup_address is for a PRIMARY only");
  }
  return absl::OkStatus();
}

}  // namespace

ShardStore::ShardStore(ShardStoreOptions options, Clock& clock, prometheus::Registry& registry)
    : options_(std::move(options)),
      env_(options_.env != nullptr ? *options_.env : posix_env_),
      clock_(clock),
      metrics_(registry),
      pushes_(options_.pushes, clock, metrics_) {}

ShardStore::~ShardStore() {
  absl::MutexLock l(&mu_);
  if (job_ != nullptr) job_->Shutdown();
}

absl::StatusOr<CreateVariablesResponse> ShardStore::CreateVariables(
    const CreateVariablesRequest& request) {
  RETURN_IF_ERROR(ValidateReplica(request.replica()));
  std::shared_ptr<ParameterShard> replaced;
  std::shared_ptr<ReplicaForwarder> old_forwarder;
  CreateVariablesResponse response;
  {
    absl::MutexLock l(&mu_);
    const bool same_job = job_ != nullptr && job_->job_id() == request.job_id();
    const uint64_t running = same_job ? job_->request().generation() : 0;
    if (same_job && request.generation() < running) {
      return absl::FailedPreconditionError(
          absl::StrCat("job ", request.job_id(), " runs here as generation ", running,
                       "; generation ", request.generation(), " is older and cannot replace it"));
    }
    const bool new_run = same_job && request.generation() > running;
    if (job_ != nullptr && !new_run) {
      if (!same_job) {
        return absl::FailedPreconditionError(absl::StrCat(
            "job ", job_->job_id(), " is running on this shard; drop it before setting up ",
            request.job_id()));
      }
      if (!google::protobuf::util::MessageDifferencer::Equals(job_->request(), request)) {
        return absl::AlreadyExistsError(
            absl::StrCat("job ", request.job_id(),
                         " is already set up on this shard with other variables "
                         "or settings"));
      }
    } else {
      // The tables' metrics are registered afresh by the new run.
      if (new_run) metrics_.ClearEmbeddingTables();
      ASSIGN_OR_RETURN(std::unique_ptr<ParameterShard> shard,
                       ParameterShard::Create(request, options_.shard, clock_, metrics_));
      if (new_run) {
        // A new run of the job (a rollback, or a restarted coordinator):
        // the old run's variables go, and with them whatever its workers
        // still push or wait for.
        LOG(INFO) << "job " << request.job_id() << ": generation " << request.generation()
                  << " replaces generation " << running << " on this shard";
        replaced = std::move(job_);
      }
      job_ = std::move(shard);
      old_forwarder = SetUpReplicaLocked(request.replica(), *job_);
    }
    response.set_version(job_->version());
    response.set_variable_bytes(job_->variable_bytes());
  }
  if (old_forwarder != nullptr) old_forwarder->Stop(JobEnded(request.job_id()));
  if (replaced != nullptr) replaced->Shutdown();
  return response;
}

std::shared_ptr<ReplicaForwarder> ShardStore::SetUpReplicaLocked(const ReplicaSetup& setup,
                                                                 ParameterShard& shard) {
  std::shared_ptr<ReplicaForwarder> old = std::move(forwarder_);
  replica_ = setup;
  applier_ = nullptr;
  state_bytes_ = 0;
  if (setup.role() == REPLICA_ROLE_BACKUP) {
    applier_ = std::make_shared<ReplicaApplier>(setup.epoch(), metrics_);
  } else if (setup.role() == REPLICA_ROLE_PRIMARY && !setup.backup_address().empty()) {
    forwarder_ = std::make_shared<ReplicaForwarder>(ForwarderOptions(setup, shard), metrics_);
  }
  shard.SetUpdateLog(forwarder_);
  metrics_.SetReplicaRole(setup.role());
  return old;
}

ReplicaForwarderOptions ShardStore::ForwarderOptions(const ReplicaSetup& setup,
                                                     const ParameterShard& shard) const {
  ReplicaForwarderOptions options;
  options.job_id = shard.job_id();
  options.generation = shard.request().generation();
  options.epoch = setup.epoch();
  options.backup_address = setup.backup_address();
  options.security = options_.replica_security;
  return options;
}

absl::Status ShardStore::DropJob(const DropJobRequest& request) {
  if (request.job_id().empty()) return absl::InvalidArgumentError("job_id is empty");
  std::shared_ptr<ParameterShard> dropped;
  std::shared_ptr<ReplicaForwarder> forwarder;
  {
    absl::MutexLock l(&mu_);
    if (job_ == nullptr || job_->job_id() != request.job_id()) return absl::OkStatus();
    if (request.up_to_generation() != 0 &&
        job_->request().generation() > request.up_to_generation()) {
      return absl::OkStatus();
    }
    dropped = std::move(job_);
    forwarder = std::move(forwarder_);
    applier_ = nullptr;
    replica_.Clear();
    metrics_.SetReplicaRole(REPLICA_ROLE_UNSPECIFIED);
  }
  if (forwarder != nullptr) forwarder->Stop(JobEnded(request.job_id()));
  dropped->Shutdown();
  metrics_.ClearEmbeddingTables();
  metrics_.SetVariables(0, 0);
  return absl::OkStatus();
}

std::shared_ptr<ParameterShard> ShardStore::current_job() const {
  absl::MutexLock l(&mu_);
  return job_;
}

absl::StatusOr<std::shared_ptr<ParameterShard>> ShardStore::GetJob(absl::string_view job_id,
                                                                   uint64_t generation) const {
  absl::MutexLock l(&mu_);
  ASSIGN_OR_RETURN(std::shared_ptr<ParameterShard> job, FindJobLocked(job_id, generation));
  if (replica_.role() == REPLICA_ROLE_BACKUP) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "this parameter server is a backup of job ", job_id,
                          "'s shard: take the job's current assignment, which names its primary")),
                      ERROR_REASON_NOT_PRIMARY);
  }
  if (forwarder_ != nullptr) RETURN_IF_ERROR(forwarder_->failure());
  return job;
}

absl::StatusOr<std::shared_ptr<ParameterShard>> ShardStore::FindJob(absl::string_view job_id,
                                                                    uint64_t generation) const {
  absl::MutexLock l(&mu_);
  return FindJobLocked(job_id, generation);
}

absl::StatusOr<std::shared_ptr<ParameterShard>> ShardStore::FindJobLocked(
    absl::string_view job_id, uint64_t generation) const {
  if (job_id.empty()) return absl::InvalidArgumentError("job_id is empty");
  if (job_ == nullptr) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "job ", job_id, " is not running on this shard (no job is)")),
                      ERROR_REASON_JOB_ENDED);
  }
  if (job_->job_id() != job_id) {
    return WithReason(
        absl::FailedPreconditionError(absl::StrCat(
            "job ", job_id, " is not running on this shard (job ", job_->job_id(), " is)")),
        ERROR_REASON_JOB_ENDED);
  }
  const uint64_t running = job_->request().generation();
  if (generation != 0 && generation != running) {
    return WithReason(
        absl::FailedPreconditionError(absl::StrCat("generation ", generation, " of job ", job_id,
                                                   " is over on this shard (generation ", running,
                                                   " runs now): take the job's new assignment")),
        ERROR_REASON_RUN_ROLLED_BACK);
  }
  return job_;
}

absl::StatusOr<std::string> ShardStore::ResolvePath(absl::string_view path) const {
  if (options_.checkpoint_root.empty()) {
    return absl::InvalidArgumentError("this shard has no checkpoint root; start it with one");
  }
  std::string root = options_.checkpoint_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  absl::string_view rel = path;
  if (absl::StartsWith(path, "/")) {
    if (!absl::StartsWith(path, root + "/")) {
      return absl::InvalidArgumentError(
          absl::StrCat("path ", path, " is not under the checkpoint root ", root));
    }
    rel = path.substr(root.size() + 1);
  }
  if (rel.empty() || rel.size() > 4096) {
    return absl::InvalidArgumentError(absl::StrCat("path \"", path, "\" names no file"));
  }
  for (absl::string_view part : absl::StrSplit(rel, '/')) {
    if (part.empty() || part == "." || part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("path \"", path, "\" has an empty, '.' or '..' component"));
    }
  }
  const std::string full = absl::StrCat(root, "/", rel);
  // A symlink under the root may lead out of it: compare where the path
  // really leads with where the root really is.
  absl::StatusOr<std::string> resolved = ResolveExistingPart(env_, full);
  absl::StatusOr<std::string> resolved_root = ResolveExistingPart(env_, root);
  if (!resolved.ok()) return resolved.status();
  if (!resolved_root.ok()) return resolved_root.status();
  if (!absl::StartsWith(*resolved, *resolved_root + "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("path ", path, " leads to ", *resolved,
                     " through a symlink, outside the checkpoint root ", *resolved_root));
  }
  return full;
}

absl::StatusOr<SnapshotResponse> ShardStore::Snapshot(const SnapshotRequest& request) {
  ASSIGN_OR_RETURN(std::shared_ptr<ParameterShard> shard, GetJob(request.job_id()));
  ASSIGN_OR_RETURN(const std::string path, ResolvePath(request.path()));
  if (request.global_step() < 0) return absl::InvalidArgumentError("global_step must be >= 0");
  ASSIGN_OR_RETURN(const SnapshotInfo info,
                   WriteShardSnapshot(env_, *shard, path, request.global_step()));
  SnapshotResponse response;
  response.set_path(path);
  response.set_bytes(info.bytes);
  response.set_crc32c(info.crc32c);
  response.set_version(info.version);
  *response.mutable_ledger() = info.ledger;
  return response;
}

absl::StatusOr<RestoreResponse> ShardStore::Restore(const RestoreRequest& request) {
  ASSIGN_OR_RETURN(std::shared_ptr<ParameterShard> shard, FindJob(request.job_id(), 0));
  ASSIGN_OR_RETURN(const std::string path, ResolvePath(request.path()));
  if (request.expected_bytes() < 0) {
    return absl::InvalidArgumentError("expected_bytes must be >= 0");
  }
  ShardFileExpectation expect;
  expect.bytes = request.expected_bytes();
  expect.crc32c = request.expected_crc32c();
  // A manifest always has both; a bare restore (no manifest) has neither.
  expect.check_crc32c = request.expected_bytes() > 0;
  ASSIGN_OR_RETURN(const SnapshotInfo info, RestoreShardSnapshot(env_, *shard, path, expect));
  std::shared_ptr<ReplicaForwarder> old_forwarder;
  {
    // Both replicas start from the restored state with an empty log.
    absl::MutexLock l(&mu_);
    if (job_ == shard) {
      if (applier_ != nullptr) applier_->Reset();
      if (forwarder_ != nullptr) old_forwarder = SetUpReplicaLocked(replica_, *shard);
    }
  }
  if (old_forwarder != nullptr) old_forwarder->GoOnAlone();
  RestoreResponse response;
  response.set_version(info.version);
  response.set_variables(shard->num_variables());
  return response;
}

absl::StatusOr<PushLedger> ShardStore::ReadPushLedger(const ReadPushLedgerRequest& request) {
  for (int64_t id : request.lease_ids()) {
    if (id <= 0) return absl::InvalidArgumentError(absl::StrCat("lease_ids: ", id, " is not > 0"));
  }
  if (request.seal() && request.lease_ids().empty()) {
    return absl::InvalidArgumentError("seal needs the lease_ids to seal");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<ParameterShard> shard, GetJob(request.job_id()));
  const std::vector<int64_t> ids(request.lease_ids().begin(), request.lease_ids().end());
  return shard->ReadLedger(ids, request.seal() ? LedgerRead::kSeal : LedgerRead::kOnly);
}

absl::StatusOr<CommitRoundResponse> ShardStore::CommitRound(const CommitRoundRequest& request) {
  ASSIGN_OR_RETURN(std::shared_ptr<ParameterShard> shard,
                   GetJob(request.job_id(), request.generation()));
  std::vector<PushKey> members;
  members.reserve(request.members_size());
  for (const PushId& m : request.members()) {
    members.push_back(PushKey{m.worker(), m.incarnation(), m.sequence()});
  }
  ASSIGN_OR_RETURN(const int64_t version, shard->CommitRound(request.round(), members));
  CommitRoundResponse response;
  response.set_version(version);
  return response;
}

absl::StatusOr<ReplicaProgress> ShardStore::Replicate(const ReplicateRequest& request) {
  std::shared_ptr<ParameterShard> shard;
  std::shared_ptr<ReplicaApplier> applier;
  {
    absl::MutexLock l(&mu_);
    ASSIGN_OR_RETURN(shard, FindJobLocked(request.job_id(), request.generation()));
    applier = applier_;
  }
  if (applier == nullptr) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "this parameter server was never a backup of job ", request.job_id())),
                      ERROR_REASON_REPLICA_FENCED);
  }
  return applier->Apply(*shard, request);
}

absl::StatusOr<ChangeReplicaResponse> ShardStore::ChangeReplica(
    const ChangeReplicaRequest& request, absl::Time deadline) {
  const ReplicaSetup& setup = request.replica();
  if (setup.role() == REPLICA_ROLE_UNSPECIFIED) {
    return absl::InvalidArgumentError("replica.role must be PRIMARY or BACKUP");
  }
  RETURN_IF_ERROR(ValidateReplica(setup));
  std::shared_ptr<ParameterShard> shard;
  std::shared_ptr<ReplicaApplier> applier;
  bool rebuild = false;
  {
    absl::MutexLock l(&mu_);
    ASSIGN_OR_RETURN(shard, FindJobLocked(request.job_id(), request.generation()));
    if (replica_.role() == REPLICA_ROLE_UNSPECIFIED) {
      return absl::FailedPreconditionError(
          absl::StrCat("job ", request.job_id(), " has no replicas on this shard"));
    }
    if (google::protobuf::util::MessageDifferencer::Equals(setup, replica_)) {
      if (forwarder_ != nullptr) RETURN_IF_ERROR(forwarder_->failure());
      return ProgressLocked();
    }
    if (setup.epoch() <= replica_.epoch()) {
      return WithReason(absl::FailedPreconditionError(absl::StrCat(
                            "epoch ", setup.epoch(), " is not above this replica's epoch ",
                            replica_.epoch())),
                        ERROR_REASON_REPLICA_FENCED);
    }
    if (replica_.role() == REPLICA_ROLE_PRIMARY && setup.role() == REPLICA_ROLE_BACKUP) {
      return absl::FailedPreconditionError(
          "a primary cannot become a backup: its state would need a rebuild");
    }
    rebuild = !setup.backup_address().empty();
    if (rebuild && replica_.role() != REPLICA_ROLE_PRIMARY) {
      return absl::FailedPreconditionError(
          "a backup is promoted alone; it rebuilds a backup of its own once it is the primary");
    }
    applier = applier_;
  }
  if (rebuild) return RebuildBackup(request, std::move(shard), deadline);
  // A promoted backup first finishes the entry it is applying; its old
  // primary's streams are refused from now on.
  if (applier != nullptr) RETURN_IF_ERROR(applier->RaiseEpoch(setup.epoch()));
  std::shared_ptr<ReplicaForwarder> old_forwarder;
  {
    absl::MutexLock l(&mu_);
    if (job_ != shard) return JobEnded(request.job_id());
    old_forwarder = SetUpReplicaLocked(setup, *shard);
    // A promoted backup keeps refusing its old primary's streams.
    if (setup.role() == REPLICA_ROLE_PRIMARY && applier != nullptr) applier_ = applier;
  }
  // What waited for the old backup is answered: the coordinator decided
  // it is gone.
  if (old_forwarder != nullptr) old_forwarder->GoOnAlone();
  LOG(INFO) << "job " << request.job_id() << ": this replica is now "
            << ReplicaRole_Name(setup.role()) << " in epoch " << setup.epoch()
            << (setup.backup_address().empty() ? " without a backup"
                                               : " with backup " + setup.backup_address());
  ChangeReplicaResponse response;
  response.set_version(shard->version());
  return response;
}

absl::StatusOr<ChangeReplicaResponse> ShardStore::RebuildBackup(
    const ChangeReplicaRequest& request, std::shared_ptr<ParameterShard> shard,
    absl::Time deadline) {
  const ReplicaSetup& setup = request.replica();
  ReplicaForwarderOptions options = ForwarderOptions(setup, *shard);
  options.rebuilds_backup = true;
  auto forwarder = std::make_shared<ReplicaForwarder>(std::move(options), metrics_);
  const absl::Time start = clock_.Now();
  ASSIGN_OR_RETURN(ShardState state, CutShardState(*shard, forwarder, deadline));
  const absl::Duration paused = clock_.Now() - start;
  const int64_t bytes = static_cast<int64_t>(state.bytes.size());
  std::shared_ptr<ReplicaForwarder> old_forwarder;
  ChangeReplicaResponse response;
  {
    absl::MutexLock l(&mu_);
    if (job_ != shard) return JobEnded(request.job_id());
    old_forwarder = std::move(forwarder_);
    forwarder_ = forwarder;
    replica_ = setup;
    state_bytes_ = bytes;
    response = ProgressLocked();
  }
  forwarder->SendState(std::move(state.bytes), state.crc32c);
  // Its decisions are in the state.
  if (old_forwarder != nullptr) old_forwarder->GoOnAlone();
  LOG(INFO) << "job " << request.job_id() << ": rebuilding backup " << setup.backup_address()
            << " in epoch " << setup.epoch() << " from a copy of " << bytes
            << " bytes at version " << state.version << " (cut and copied in "
            << absl::FormatDuration(paused) << ")";
  return response;
}

ChangeReplicaResponse ShardStore::ProgressLocked() const {
  ChangeReplicaResponse response;
  response.set_version(job_->version());
  response.set_state_bytes(state_bytes_);
  response.set_backup_joined(forwarder_ != nullptr && forwarder_->joined());
  return response;
}

ReplicaSetup ShardStore::replica() const {
  absl::MutexLock l(&mu_);
  return replica_;
}

}  // namespace pstrain
