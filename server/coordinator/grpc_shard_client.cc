#include "server/coordinator/grpc_shard_client.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {

GrpcShardClient::GrpcShardClient(std::string address, Clock& clock, GrpcShardClientOptions options)
    : GrpcShardClient(address, CreateSecureChannel(address, options.security), clock, options) {}

GrpcShardClient::GrpcShardClient(std::string address, std::shared_ptr<grpc::Channel> channel,
                                 Clock& clock, GrpcShardClientOptions options)
    : address_(std::move(address)),
      clock_(clock),
      options_(options),
      stub_(ParameterServer::NewStub(std::move(channel))) {}

bool GrpcShardClient::Backoff(absl::Duration backoff) {
  absl::MutexLock lock(&mu_);
  clock_.AwaitWithDeadline(&mu_, absl::Condition(&cancelled_), clock_.Now() + backoff);
  return !cancelled_;
}

absl::Status GrpcShardClient::Call(const char* method, absl::Duration timeout,
                                   const Attempt& attempt,
                                   std::optional<absl::Duration> retry_budget) {
  const absl::Time give_up = clock_.Now() + retry_budget.value_or(options_.retry_budget);
  absl::Duration backoff = options_.initial_backoff;
  absl::BitGen random;
  for (int attempts = 1;; ++attempts) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) {
        return absl::CancelledError(
            absl::StrCat(method, ": cancelled, the coordinator is shutting down"));
      }
      in_flight_.insert(&context);
    }
    const absl::Status status = FromGrpcStatus(attempt(&context));
    bool cancelled;
    {
      absl::MutexLock lock(&mu_);
      in_flight_.erase(&context);
      cancelled = cancelled_;
    }
    if (status.ok()) return status;
    const absl::Status named(
        status.code(), absl::StrCat(method, ": ", status.message(),
                                    attempts > 1 ? absl::StrCat(" (after ", attempts, " attempts)")
                                                 : std::string()));
    if (status.code() != absl::StatusCode::kUnavailable || cancelled) return named;
    const absl::Duration wait = backoff * absl::Uniform(random, 0.5, 1.0);
    if (clock_.Now() + wait >= give_up) return named;
    VLOG(1) << "ps at " << address_ << ": " << named << "; retrying in "
            << absl::FormatDuration(wait);
    if (!Backoff(wait)) return named;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

absl::StatusOr<CreateVariablesResponse> GrpcShardClient::CreateVariables(
    const CreateVariablesRequest& request) {
  CreateVariablesResponse response;
  absl::Status status =
      Call("CreateVariables", options_.create_timeout, [&](grpc::ClientContext* context) {
        return stub_->CreateVariables(context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::Status GrpcShardClient::DropJob(const DropJobRequest& request) {
  return Call("DropJob", options_.drop_timeout, [&](grpc::ClientContext* context) {
    DropJobResponse response;
    return stub_->DropJob(context, request, &response);
  });
}

absl::StatusOr<SnapshotResponse> GrpcShardClient::Snapshot(const SnapshotRequest& request) {
  SnapshotResponse response;
  absl::Status status = Call(
      "Snapshot", options_.snapshot_timeout,
      [&](grpc::ClientContext* context) { return stub_->Snapshot(context, request, &response); });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<RestoreResponse> GrpcShardClient::Restore(const RestoreRequest& request) {
  RestoreResponse response;
  absl::Status status = Call(
      "Restore", options_.restore_timeout,
      [&](grpc::ClientContext* context) { return stub_->Restore(context, request, &response); });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<PushLedger> GrpcShardClient::ReadPushLedger(const ReadPushLedgerRequest& request) {
  PushLedger response;
  absl::Status status = Call(
      "ReadPushLedger", options_.ledger_timeout,
      [&](grpc::ClientContext* context) { return stub_->ReadPushLedger(context, request, &response); },
      options_.ledger_timeout);
  if (!status.ok()) return status;
  return response;
}

void GrpcShardClient::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  for (grpc::ClientContext* context : in_flight_) context->TryCancel();
}

}  // namespace coordinator
}  // namespace pstrain
