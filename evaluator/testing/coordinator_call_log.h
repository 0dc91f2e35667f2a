#ifndef PSTRAIN_EVALUATOR_TESTING_COORDINATOR_CALL_LOG_H_
#define PSTRAIN_EVALUATOR_TESTING_COORDINATOR_CALL_LOG_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "protos/coordinator.pb.h"
#include "server/coordinator/testing/coordinator_call_log.h"

namespace pstrain {
namespace evaluator {

// What an evaluator told a coordinator and heard from it, read from a
// coordinator::CoordinatorCallLog on the evaluator's channel: the eval
// reports, checkpoint releases and registrations the coordinator accepted
// (answered OK), and the checkpoint notifications it streamed. Lets a test
// run the evaluator against the real coordinator and still see each report
// as it was sent. Thread-safe.
class CoordinatorCallLog {
 public:
  CoordinatorCallLog() = default;

  CoordinatorCallLog(const CoordinatorCallLog&) = delete;
  CoordinatorCallLog& operator=(const CoordinatorCallLog&) = delete;

  // A plaintext channel to `address` whose calls are recorded here. The log
  // must outlive the channel.
  std::shared_ptr<grpc::Channel> NewChannel(const std::string& address) {
    return calls_.NewChannel(address);
  }

  // Blocks until the coordinator accepted `count` eval reports or `timeout`
  // (real time) passed; returns the reports accepted so far, in order.
  std::vector<EvalReport> WaitForReports(size_t count, absl::Duration timeout) const;
  // The steps of the checkpoint releases the coordinator accepted.
  std::vector<int64_t> released() const;
  int registrations() const;
  // Blocks until the evaluator received `count` checkpoint notifications or
  // `timeout` (real time) passed; whether it did.
  bool WaitForNotifications(int count, absl::Duration timeout) const;

 private:
  coordinator::CoordinatorCallLog calls_;
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_TESTING_COORDINATOR_CALL_LOG_H_
