#include "evaluator/coordinator_client.h"

#include <functional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace evaluator {
namespace {

absl::Status CallStatus(const grpc::Status& status, absl::string_view method) {
  absl::Status converted = FromGrpcStatus(status);
  if (converted.ok()) return converted;
  return absl::Status(converted.code(),
                      absl::StrCat("coordinator ", method, ": ", converted.message()));
}

// The ClientContexts of calls in flight, so Shutdown can cancel them.
// Thread-safe.
class CallRegistry {
 public:
  // false (and nothing registered) once shut down.
  bool Add(grpc::ClientContext* context) {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return false;
    contexts_.insert(context);
    return true;
  }
  void Remove(grpc::ClientContext* context) {
    absl::MutexLock lock(&mu_);
    contexts_.erase(context);
  }
  void Shutdown() {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    for (grpc::ClientContext* context : contexts_) context->TryCancel();
  }

 private:
  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<grpc::ClientContext*> contexts_ ABSL_GUARDED_BY(mu_);
};

absl::Status ShutDownError(absl::string_view method) {
  return absl::CancelledError(absl::StrCat("coordinator ", method, ": the client is shut down"));
}

class GrpcCheckpointWatch final : public CheckpointWatch {
 public:
  GrpcCheckpointWatch(ClusterService::Stub& stub, CallRegistry& calls,
                      const WatchCheckpointsRequest& request, absl::Duration timeout,
                      const std::string& address)
      : calls_(calls), address_(address) {
    context_.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    if (!calls_.Add(&context_)) {
      finished_ = true;
      final_status_ = ShutDownError("WatchCheckpoints");
      return;
    }
    registered_ = true;
    reader_ = stub.WatchCheckpoints(&context_, request);
  }

  ~GrpcCheckpointWatch() override {
    Cancel();
    if (!finished_) {
      CheckpointNotification ignored;
      while (reader_->Read(&ignored)) {
      }
      reader_->Finish().ok();
    }
    if (registered_) calls_.Remove(&context_);
  }

  absl::StatusOr<CheckpointNotification> Next() override {
    if (finished_) return final_status_;
    CheckpointNotification notification;
    if (reader_->Read(&notification)) return notification;
    finished_ = true;
    const grpc::Status status = reader_->Finish();
    if (status.ok()) {
      final_status_ = absl::OutOfRangeError("the coordinator ended the checkpoint stream");
    } else if (status.error_code() == grpc::StatusCode::CANCELLED) {
      final_status_ = absl::CancelledError("checkpoint stream cancelled");
    } else {
      final_status_ = CallStatus(status, absl::StrCat("WatchCheckpoints at ", address_));
    }
    return final_status_;
  }

  void Cancel() override {
    absl::MutexLock lock(&mu_);
    if (cancelled_) return;
    cancelled_ = true;
    context_.TryCancel();
  }

 private:
  CallRegistry& calls_;
  const std::string address_;
  grpc::ClientContext context_;
  bool registered_ = false;
  std::unique_ptr<grpc::ClientReader<CheckpointNotification>> reader_;
  // Touched by the reading thread only.
  bool finished_ = false;
  absl::Status final_status_;

  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

class GrpcCoordinatorClient final : public CoordinatorClient {
 public:
  // `address` names the coordinator in errors (and so in the evaluator's
  // "waiting" lines).
  GrpcCoordinatorClient(std::shared_ptr<grpc::Channel> channel, const std::string& address,
                        const GrpcCoordinatorClientOptions& options)
      : address_(address), options_(options), stub_(ClusterService::NewStub(std::move(channel))) {}

  absl::StatusOr<RegisterResponse> Register(const RegisterRequest& request) override {
    return Call<RegisterResponse>("Register", absl::ZeroDuration(),
                                  [&](grpc::ClientContext* context, RegisterResponse* response) {
                                    return stub_->Register(context, request, response);
                                  });
  }

  absl::StatusOr<HeartbeatResponse> Heartbeat(const HeartbeatRequest& request) override {
    return Call<HeartbeatResponse>("Heartbeat", absl::ZeroDuration(),
                                   [&](grpc::ClientContext* context, HeartbeatResponse* response) {
                                     return stub_->Heartbeat(context, request, response);
                                   });
  }

  absl::StatusOr<Assignment> GetAssignment(const GetAssignmentRequest& request) override {
    return Call<Assignment>("GetAssignment", absl::Milliseconds(request.wait_ms()),
                            [&](grpc::ClientContext* context, Assignment* response) {
                              return stub_->GetAssignment(context, request, response);
                            });
  }

  absl::StatusOr<EvalReportResponse> ReportEval(const EvalReport& request) override {
    return Call<EvalReportResponse>(
        "ReportEval", absl::ZeroDuration(),
        [&](grpc::ClientContext* context, EvalReportResponse* response) {
          return stub_->ReportEval(context, request, response);
        });
  }

  absl::Status ReleaseCheckpoint(const ReleaseCheckpointRequest& request) override {
    return Call<ReleaseCheckpointResponse>(
               "ReleaseCheckpoint", absl::ZeroDuration(),
               [&](grpc::ClientContext* context, ReleaseCheckpointResponse* response) {
                 return stub_->ReleaseCheckpoint(context, request, response);
               })
        .status();
  }

  std::unique_ptr<CheckpointWatch> WatchCheckpoints(
      const WatchCheckpointsRequest& request) override {
    return std::make_unique<GrpcCheckpointWatch>(*stub_, calls_, request, options_.watch_timeout,
                                                 address_);
  }

  void Shutdown() override { calls_.Shutdown(); }

 private:
  // One unary call with a deadline of call_timeout + `extra`, cancelled by
  // Shutdown.
  template <typename Response>
  absl::StatusOr<Response> Call(
      absl::string_view method, absl::Duration extra,
      const std::function<grpc::Status(grpc::ClientContext*, Response*)>& call) {
    grpc::ClientContext context;
    // RPC deadlines are wall-clock by nature: they bound real waiting.
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout + extra));
    if (!calls_.Add(&context)) return ShutDownError(method);
    Response response;
    const grpc::Status status = call(&context, &response);
    calls_.Remove(&context);
    absl::Status converted = CallStatus(status, absl::StrCat(method, " at ", address_));
    if (!converted.ok()) return converted;
    return response;
  }

  const std::string address_;
  const GrpcCoordinatorClientOptions options_;
  const std::unique_ptr<ClusterService::Stub> stub_;
  CallRegistry calls_;
};

}  // namespace

std::unique_ptr<CoordinatorClient> NewGrpcCoordinatorClient(
    const std::string& address, const GrpcCoordinatorClientOptions& options) {
  return std::make_unique<GrpcCoordinatorClient>(CreateSecureChannel(address, options.security),
                                                 address, options);
}

}  // namespace evaluator
}  // namespace pstrain
