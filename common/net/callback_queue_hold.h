#ifndef PSTRAIN_COMMON_NET_CALLBACK_QUEUE_HOLD_H_
#define PSTRAIN_COMMON_NET_CALLBACK_QUEUE_HOLD_H_

// Keeps gRPC's process-wide callback queue alive, for processes that make
// and drop gRPC callback servers and channels one after another (tests,
// benchmarks).
//
// gRPC 1.51 runs callback reactions through a process-wide completion queue
// (CompletionQueue::CallbackAlternativeCQ) that the first server or channel
// needing it creates and the last one releases. A process that lets every
// server and channel go and then makes new ones races that release: seen as
// "ref_counted.h:183 assertion failed: prior > 0" from
// grpc_cq_internal_unref on one of the queue's threads (about one run in
// sixteen of tests/shared_memory_lane_test; bench/ps/push_pull_bench, which
// starts and stops shards for every round). The daemons keep their servers
// and channels for their whole life and never release it.

#include <memory>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"

namespace pstrain {

// A callback server listening nowhere: while it lives, the queue stays.
class CallbackQueueHold {
 public:
  // Null when the server cannot start.
  static std::unique_ptr<CallbackQueueHold> Start();
  ~CallbackQueueHold();

  CallbackQueueHold(const CallbackQueueHold&) = delete;
  CallbackQueueHold& operator=(const CallbackQueueHold&) = delete;

 private:
  CallbackQueueHold() = default;

  grpc::CallbackGenericService service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_CALLBACK_QUEUE_HOLD_H_
