#include "server/ps/replica_applier.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "server/ps/replica_entry.h"
#include "server/ps/shard_snapshot.h"

namespace pstrain {
namespace {

absl::Status Diverged(uint64_t sequence, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("replica entry ", sequence, ": ", what, "; the replicas diverged"));
}

absl::Status Fenced(uint64_t theirs, uint64_t ours) {
  return WithReason(absl::FailedPreconditionError(absl::StrCat(
                        "replication epoch ", theirs, " is older than this replica's epoch ", ours,
                        ": the sender was replaced")),
                    ERROR_REASON_REPLICA_FENCED);
}

}  // namespace

absl::StatusOr<ReplicaProgress> ReplicaApplier::Apply(ParameterShard& shard,
                                                      const ReplicateRequest& request) {
  absl::MutexLock l(&mu_);
  if (request.epoch() < epoch_) return Fenced(request.epoch(), epoch_);
  if (request.epoch() > epoch_) {
    epoch_ = request.epoch();
    applied_through_ = 0;
    holds_state_ = false;
    state_.clear();
  }
  if (request.has_state()) RETURN_IF_ERROR(TakeStatePiece(shard, request.state()));
  for (const ReplicaEntry& entry : request.entries()) {
    if (entry.sequence() <= applied_through_) continue;  // resent
    if (entry.sequence() != applied_through_ + 1) {
      return Diverged(entry.sequence(), absl::StrCat("out of sequence after ", applied_through_));
    }
    RETURN_IF_ERROR(ApplyEntry(shard, entry));
    applied_through_ = entry.sequence();
    metrics_.RecordReplicaApplied(1);
  }
  return ReplicaProgress{applied_through_, holds_state_};
}

absl::Status ReplicaApplier::TakeStatePiece(ParameterShard& shard, const ReplicaState& piece) {
  // A stream that broke sends the state again from its start.
  if (piece.offset() == 0) state_.clear();
  if (piece.offset() != static_cast<int64_t>(state_.size()) ||
      piece.offset() + static_cast<int64_t>(piece.data().size()) > piece.total_bytes()) {
    return absl::DataLossError(absl::StrCat("a piece of the primary's state at byte ",
                                            piece.offset(), " of ", piece.total_bytes(),
                                            " came after ", state_.size(), " bytes"));
  }
  state_.append(piece.data());
  if (static_cast<int64_t>(state_.size()) < piece.total_bytes()) return absl::OkStatus();
  std::string whole;
  whole.swap(state_);
  if (absl::Status restored = RestoreShardState(shard, std::move(whole), piece.crc32c());
      !restored.ok()) {
    return absl::DataLossError(
        absl::StrCat("the primary's state does not restore here: ", restored.message()));
  }
  // The entries of this epoch come after the state.
  applied_through_ = 0;
  holds_state_ = true;
  return absl::OkStatus();
}

absl::Status ReplicaApplier::ApplyEntry(ParameterShard& shard, const ReplicaEntry& entry) {
  switch (entry.kind_case()) {
    case ReplicaEntry::kPush: {
      const PushRequest& push = entry.push();
      absl::StatusOr<std::vector<GradientRef>> gradients = ForwardedGradients(
          push, [&shard](absl::string_view name) { return shard.FindVariable(name); });
      if (!gradients.ok()) return Diverged(entry.sequence(), gradients.status().ToString());
      const PushReply reply =
          shard.Push(ForwardedKey(push), push.base_version(), *gradients, PushSourceOf(push));
      if (reply.outcome != PUSH_OUTCOME_APPLIED && reply.outcome != PUSH_OUTCOME_AGGREGATED) {
        return Diverged(
            entry.sequence(),
            absl::StrCat("the push was accepted by the primary, here ",
                         PushOutcome_Name(reply.outcome), " ", reply.status.ToString()));
      }
      return absl::OkStatus();
    }
    case ReplicaEntry::kCommit: {
      std::vector<PushKey> members;
      for (const PushId& m : entry.commit().members()) {
        members.push_back(PushKey{m.worker(), m.incarnation(), m.sequence()});
      }
      absl::StatusOr<int64_t> version = shard.CommitRound(entry.commit().round(), members);
      if (!version.ok()) return Diverged(entry.sequence(), version.status().ToString());
      return absl::OkStatus();
    }
    case ReplicaEntry::kSeal: {
      const std::vector<int64_t> ids(entry.seal().lease_ids().begin(),
                                     entry.seal().lease_ids().end());
      absl::StatusOr<PushLedger> sealed = shard.ReadLedger(ids, LedgerRead::kSeal);
      if (!sealed.ok()) return Diverged(entry.sequence(), sealed.status().ToString());
      return absl::OkStatus();
    }
    default:
      return Diverged(entry.sequence(), "an entry of no kind");
  }
}

absl::Status ReplicaApplier::RaiseEpoch(uint64_t epoch) {
  absl::MutexLock l(&mu_);
  if (epoch <= epoch_) return Fenced(epoch, epoch_);
  epoch_ = epoch;
  applied_through_ = 0;
  return absl::OkStatus();
}

void ReplicaApplier::Reset() {
  absl::MutexLock l(&mu_);
  applied_through_ = 0;
}

uint64_t ReplicaApplier::epoch() const {
  absl::MutexLock l(&mu_);
  return epoch_;
}

uint64_t ReplicaApplier::applied_through() const {
  absl::MutexLock l(&mu_);
  return applied_through_;
}

}  // namespace pstrain
