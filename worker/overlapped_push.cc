#include "worker/overlapped_push.h"

#include <utility>

#include "glog/logging.h"

namespace pstrain {
namespace worker {

OverlappedPush::OverlappedPush(ParameterServerClient& ps) : ps_(ps), thread_([this] { Serve(); }) {}

OverlappedPush::~OverlappedPush() {
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  thread_.join();
}

void OverlappedPush::Start(const Gradients& gradients, std::vector<int64_t> base_versions,
                           int64_t examples, PushOrigin origin) {
  CHECK(!in_flight_) << "a push is already in flight";
  in_flight_ = true;
  origin_ = origin;
  absl::MutexLock lock(&mu_);
  request_ = Request{&gradients, std::move(base_versions), examples, std::move(origin)};
}

absl::StatusOr<PushSummary> OverlappedPush::Finish() {
  CHECK(in_flight_) << "no push in flight";
  in_flight_ = false;
  absl::MutexLock lock(&mu_);
  auto pushed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return result_.has_value(); };
  mu_.Await(absl::Condition(&pushed));
  absl::StatusOr<PushSummary> result = *std::move(result_);
  result_.reset();
  return result;
}

void OverlappedPush::Serve() {
  while (true) {
    Request request;
    {
      absl::MutexLock lock(&mu_);
      auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return request_.has_value() || closing_;
      };
      mu_.Await(absl::Condition(&work));
      // A push already started is made even when closing: the destructor
      // waits for it, so its borrowed gradients outlive it.
      if (!request_.has_value()) return;
      request = *std::move(request_);
      request_.reset();
    }
    absl::StatusOr<PushSummary> result =
        ps_.Push(*request.gradients, request.base_versions, request.examples, request.origin);
    absl::MutexLock lock(&mu_);
    result_ = std::move(result);
  }
}

}  // namespace worker
}  // namespace pstrain
