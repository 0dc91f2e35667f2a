#include "worker/overlapped_push.h"

#include <utility>

#include "glog/logging.h"

namespace pstrain {
namespace worker {

OverlappedPush::OverlappedPush(ParameterServerClient& ps) : ps_(ps) {}

OverlappedPush::~OverlappedPush() {
  if (in_flight()) ps_.FinishPush().IgnoreError();
}

void OverlappedPush::Start(const Gradients& gradients, std::vector<int64_t> base_versions,
                           int64_t examples, PushOrigin origin) {
  CHECK(!in_flight()) << "a push is already in flight";
  origin_ = std::move(origin);
  ps_.StartPush(gradients, base_versions, examples, origin_);
}

absl::StatusOr<PushSummary> OverlappedPush::Finish() {
  CHECK(in_flight()) << "no push in flight";
  return ps_.FinishPush();
}

}  // namespace worker
}  // namespace pstrain
