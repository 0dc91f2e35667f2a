// Linked into tests that create and destroy gRPC callback servers and
// channels case after case (alwayslink: nothing refers to it).
//
// gRPC 1.51 runs callback reactions through a process-wide completion queue
// (CompletionQueue::CallbackAlternativeCQ) that the first server or channel
// needing it creates and the last one releases. A test that lets every
// server and channel go between two cases and makes new ones races that
// release: seen as "ref_counted.h:183 assertion failed: prior > 0" from
// grpc_cq_internal_unref on one of the queue's threads, in about one run
// in sixteen of tests/shared_memory_lane_test. The daemons keep their
// servers and channels for their whole life and never release it. This
// keeps one callback server, listening nowhere, for the whole test process.

#include <memory>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

class CallbackQueueKeeper : public ::testing::Environment {
 public:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterCallbackGenericService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr) << "cannot start the server that keeps gRPC's callback queue";
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

 private:
  grpc::CallbackGenericService service_;
  std::unique_ptr<grpc::Server> server_;
};

[[maybe_unused]] const ::testing::Environment* const kKeeper =
    ::testing::AddGlobalTestEnvironment(new CallbackQueueKeeper);

}  // namespace
}  // namespace pstrain
