#include "server/coordinator/grpc_shard_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
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

absl::Status GrpcShardClient::Call(const char* method, absl::Duration timeout,
                                   const Attempt& attempt,
                                   std::optional<absl::Duration> retry_budget) {
  RetryOptions retry = options_.retry;
  if (retry_budget.has_value()) retry.deadline = *retry_budget;
  return RetryOnUnavailable("the shard", retry, retry_context_, [&]() -> absl::Status {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    if (!calls_.Add(&context)) {
      return absl::CancelledError(
          absl::StrCat(method, ": cancelled, the coordinator is shutting down"));
    }
    const absl::Status status = FromGrpcStatus(attempt(&context));
    calls_.Remove(&context);
    if (status.ok()) return status;
    // The reason stays: a caller of CommitRound branches on it.
    return WithPrefix(status, absl::StrCat(method, ": "));
  });
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
      [&](grpc::ClientContext* context) {
        return stub_->ReadPushLedger(context, request, &response);
      },
      options_.ledger_timeout);
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<CommitRoundResponse> GrpcShardClient::CommitRound(
    const CommitRoundRequest& request) {
  CommitRoundResponse response;
  absl::Status status =
      Call("CommitRound", options_.commit_timeout, [&](grpc::ClientContext* context) {
        return stub_->CommitRound(context, request, &response);
      });
  if (!status.ok()) return status;
  return response;
}

absl::StatusOr<ChangeReplicaResponse> GrpcShardClient::ChangeReplica(
    const ChangeReplicaRequest& request) {
  ChangeReplicaResponse response;
  absl::Status status = Call(
      "ChangeReplica", options_.change_replica_timeout,
      [&](grpc::ClientContext* context) {
        return stub_->ChangeReplica(context, request, &response);
      },
      options_.change_replica_timeout);
  if (!status.ok()) return status;
  return response;
}

void GrpcShardClient::Cancel() {
  cancelled_.Stop();
  calls_.Shutdown();
}

}  // namespace coordinator
}  // namespace pstrain
