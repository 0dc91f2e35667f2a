// Linked into tests that create and destroy gRPC callback servers and
// channels case after case (alwayslink: nothing refers to it): holds gRPC's
// process-wide callback queue for the whole test process
// (common/net/callback_queue_hold.h says why).

#include <memory>

#include "common/net/callback_queue_hold.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

class CallbackQueueKeeper : public ::testing::Environment {
 public:
  void SetUp() override {
    hold_ = CallbackQueueHold::Start();
    ASSERT_NE(hold_, nullptr) << "cannot start the server that keeps gRPC's callback queue";
  }

  void TearDown() override { hold_.reset(); }

 private:
  std::unique_ptr<CallbackQueueHold> hold_;
};

[[maybe_unused]] const ::testing::Environment* const kKeeper =
    ::testing::AddGlobalTestEnvironment(new CallbackQueueKeeper);

}  // namespace
}  // namespace pstrain
