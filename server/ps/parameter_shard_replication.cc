// ParameterShard: writing decisions to an UpdateLog and waiting for them
// to be replicated (docs/design/replicas.md).

#include <utility>

#include "server/ps/parameter_shard.h"
#include "server/ps/replica_entry.h"

namespace pstrain {

void ParameterShard::SetUpdateLog(std::shared_ptr<UpdateLog> log) {
  absl::MutexLock l(&mu_);
  logging_.store(log != nullptr, std::memory_order_relaxed);
  log_ = std::move(log);
  newest_ticket_ = 0;
}

std::optional<PushRequest> ParameterShard::PreparePush(const PushKey& key, int64_t base_version,
                                                       absl::Span<const GradientRef> gradients,
                                                       const PushSource& source) const {
  if (!logging_.load(std::memory_order_relaxed)) return std::nullopt;
  return ForwardedPush(variables_, key, base_version, gradients, source);
}

ReplicaEntry ParameterShard::PushEntryLocked(std::optional<PushRequest>& prepared,
                                             const PushKey& key, int64_t base_version,
                                             absl::Span<const GradientRef> gradients,
                                             const PushSource& source) {
  ReplicaEntry entry;
  if (prepared.has_value()) {
    *entry.mutable_push() = std::move(*prepared);
  } else {
    *entry.mutable_push() = ForwardedPush(variables_, key, base_version, gradients, source);
  }
  entry.mutable_push()->set_job_id(job_id());
  return entry;
}

ParameterShard::Replication ParameterShard::AppendLocked(ReplicaEntry entry) {
  newest_ticket_ = log_->Append(std::move(entry));
  return Replication{log_, newest_ticket_};
}

ParameterShard::Replication ParameterShard::NewestLocked() const {
  return Replication{log_, newest_ticket_};
}

absl::Status ParameterShard::AwaitReplicated(const Replication& r) {
  if (r.log == nullptr || r.ticket == 0) return absl::OkStatus();
  const absl::Time start = clock_.Now();
  absl::Status status = r.log->AwaitReplicated(r.ticket);
  metrics_.RecordReplicationWait(clock_.Now() - start);
  if (status.ok()) return status;
  {
    absl::MutexLock l(&mu_);
    if (log_failure_.ok()) log_failure_ = status;
  }
  // Pulls waiting for a version this shard may never publish end now.
  gate_.Shutdown(status);
  return status;
}

PushReply ParameterShard::Acknowledged(PushReply reply, const Replication& r) {
  if (absl::Status s = AwaitReplicated(r); !s.ok()) return Reject(std::move(s));
  return reply;
}

}  // namespace pstrain
