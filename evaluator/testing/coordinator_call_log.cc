#include "evaluator/testing/coordinator_call_log.h"

#include <utility>

#include "absl/strings/match.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/support/client_interceptor.h"

namespace pstrain {
namespace evaluator {
namespace {

constexpr char kRegister[] = "/Register";
constexpr char kReportEval[] = "/ReportEval";
constexpr char kReleaseCheckpoint[] = "/ReleaseCheckpoint";
constexpr char kWatchCheckpoints[] = "/WatchCheckpoints";

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

// One call's recorder: keeps the request as sent and records it once the
// call ends OK.
class CoordinatorCallLog::Recorder final : public grpc::experimental::Interceptor {
 public:
  Recorder(CoordinatorCallLog& log, std::string method) : log_(log), method_(std::move(method)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      if (const grpc::ByteBuffer* request = methods->GetSerializedSendMessage()) {
        request_ = Flatten(*request);
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        absl::EndsWith(method_, kWatchCheckpoints) && methods->GetRecvMessage() != nullptr) {
      log_.Notified();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_STATUS)) {
      const grpc::Status* status = methods->GetRecvStatus();
      if (status != nullptr && status->ok()) log_.Accepted(method_, request_);
    }
    methods->Proceed();
  }

 private:
  CoordinatorCallLog& log_;
  const std::string method_;
  std::string request_;
};

class CoordinatorCallLog::RecorderFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit RecorderFactory(CoordinatorCallLog& log) : log_(log) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    const absl::string_view method = info->method();
    for (const char* recorded : {kRegister, kReportEval, kReleaseCheckpoint, kWatchCheckpoints}) {
      if (absl::EndsWith(method, recorded)) return new Recorder(log_, std::string(method));
    }
    return nullptr;  // not recorded
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

std::vector<EvalReport> CoordinatorCallLog::WaitForReports(size_t count,
                                                           absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return reports_.size() >= count; };
  mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  return reports_;
}

std::vector<int64_t> CoordinatorCallLog::released() const {
  absl::MutexLock lock(&mu_);
  return released_;
}

int CoordinatorCallLog::registrations() const {
  absl::MutexLock lock(&mu_);
  return registrations_;
}

bool CoordinatorCallLog::WaitForNotifications(int count, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return notifications_ >= count; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

void CoordinatorCallLog::Accepted(absl::string_view method, const std::string& request) {
  absl::MutexLock lock(&mu_);
  if (absl::EndsWith(method, kRegister)) {
    ++registrations_;
  } else if (absl::EndsWith(method, kReportEval)) {
    EvalReport report;
    if (report.ParseFromString(request)) reports_.push_back(std::move(report));
  } else if (absl::EndsWith(method, kReleaseCheckpoint)) {
    ReleaseCheckpointRequest release;
    if (release.ParseFromString(request)) released_.push_back(release.step());
  }
}

void CoordinatorCallLog::Notified() {
  absl::MutexLock lock(&mu_);
  ++notifications_;
}

}  // namespace evaluator
}  // namespace pstrain
