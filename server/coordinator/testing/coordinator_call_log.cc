#include "server/coordinator/testing/coordinator_call_log.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/client_interceptor.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace coordinator {
namespace {

constexpr char kService[] = "/pstrain.ClusterService/";

// Serializes an answer that gRPC hands over untyped.
using AnswerWriter = std::function<std::string(const void* message)>;

template <typename Response>
std::string Write(const void* message) {
  return static_cast<const Response*>(message)->SerializeAsString();
}

// The answer type of each ClusterService method; nullptr: not a
// ClusterService method, not recorded.
AnswerWriter WriterFor(absl::string_view method) {
  if (method == "Register") return Write<RegisterResponse>;
  if (method == "Heartbeat") return Write<HeartbeatResponse>;
  if (method == "GetAssignment") return Write<Assignment>;
  if (method == "ReportProgress") return Write<ProgressResponse>;
  if (method == "AcquireDataLease") return Write<DataLease>;
  if (method == "CompleteDataLease") return Write<CompleteDataLeaseResponse>;
  if (method == "ReportEval") return Write<EvalReportResponse>;
  if (method == "WatchCheckpoints") return Write<CheckpointNotification>;
  if (method == "ReleaseCheckpoint") return Write<ReleaseCheckpointResponse>;
  return nullptr;
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (!buffer.Dump(&slices).ok()) return bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

}  // namespace

// One call's recorder: keeps the request as sent and the answer as
// received, and records them once the call ends OK.
class CoordinatorCallLog::Recorder final : public grpc::experimental::Interceptor {
 public:
  Recorder(CoordinatorCallLog& log, std::string method, AnswerWriter writer, bool streams)
      : log_(log), writer_(std::move(writer)), streams_(streams) {
    call_.method = std::move(method);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      if (const grpc::ByteBuffer* request = methods->GetSerializedSendMessage()) {
        call_.request = Flatten(*request);
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      if (const void* message = methods->GetRecvMessage(); message != nullptr) {
        if (streams_) {
          log_.Streamed(call_.method);
        } else {
          call_.response = writer_(message);
        }
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_STATUS)) {
      const grpc::Status* status = methods->GetRecvStatus();
      if (status != nullptr && status->ok()) log_.Accepted(call_);
    }
    methods->Proceed();
  }

 private:
  CoordinatorCallLog& log_;
  const AnswerWriter writer_;
  const bool streams_;
  Call call_;
};

class CoordinatorCallLog::RecorderFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit RecorderFactory(CoordinatorCallLog& log) : log_(log) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    absl::string_view method = info->method();
    if (!absl::ConsumePrefix(&method, kService)) return nullptr;  // not recorded
    AnswerWriter writer = WriterFor(method);
    if (writer == nullptr) return nullptr;
    const bool streams = info->type() == grpc::experimental::ClientRpcInfo::Type::SERVER_STREAMING;
    return new Recorder(log_, std::string(method), std::move(writer), streams);
  }

 private:
  CoordinatorCallLog& log_;
};

std::shared_ptr<grpc::Channel> CoordinatorCallLog::NewChannel(const std::string& address) {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> recorders;
  recorders.push_back(std::make_unique<RecorderFactory>(*this));
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      address, grpc::InsecureChannelCredentials(), grpc::ChannelArguments(), std::move(recorders));
}

std::vector<std::string> CoordinatorCallLog::Recorded(absl::string_view method,
                                                      std::string Call::*field) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> recorded;
  for (const Call& call : calls_) {
    if (call.method == method) recorded.push_back(call.*field);
  }
  return recorded;
}

size_t CoordinatorCallLog::Count(absl::string_view method) const {
  absl::MutexLock lock(&mu_);
  return std::count_if(calls_.begin(), calls_.end(),
                       [&](const Call& call) { return call.method == method; });
}

bool CoordinatorCallLog::WaitForCalls(absl::string_view method, size_t count,
                                      absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<size_t>(std::count_if(calls_.begin(), calls_.end(), [&](const Call& call) {
             return call.method == method;
           })) >= count;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

bool CoordinatorCallLog::WaitForStreamed(absl::string_view method, size_t count,
                                         absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<size_t>(std::count(streamed_.begin(), streamed_.end(), method)) >= count;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

void CoordinatorCallLog::Accepted(Call call) {
  absl::MutexLock lock(&mu_);
  calls_.push_back(std::move(call));
}

void CoordinatorCallLog::Streamed(const std::string& method) {
  absl::MutexLock lock(&mu_);
  streamed_.push_back(method);
}

}  // namespace coordinator
}  // namespace pstrain
