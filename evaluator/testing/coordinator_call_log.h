#ifndef PSTRAIN_EVALUATOR_TESTING_COORDINATOR_CALL_LOG_H_
#define PSTRAIN_EVALUATOR_TESTING_COORDINATOR_CALL_LOG_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace evaluator {

// What an evaluator told a coordinator and heard from it, recorded by a
// client interceptor on the evaluator's channel: the eval reports,
// checkpoint releases and registrations the coordinator accepted (answered
// OK), and the checkpoint notifications it streamed. Lets a test run the
// evaluator against the real coordinator and still see each report as it
// was sent. Thread-safe.
class CoordinatorCallLog {
 public:
  CoordinatorCallLog() = default;

  CoordinatorCallLog(const CoordinatorCallLog&) = delete;
  CoordinatorCallLog& operator=(const CoordinatorCallLog&) = delete;

  // A plaintext channel to `address` whose calls are recorded here. The log
  // must outlive the channel.
  std::shared_ptr<grpc::Channel> NewChannel(const std::string& address);

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
  class Recorder;
  class RecorderFactory;

  // A call of `method` ("/pstrain.ClusterService/ReportEval") with the
  // serialized `request` was answered OK.
  void Accepted(absl::string_view method, const std::string& request);
  void Notified();

  mutable absl::Mutex mu_;
  std::vector<EvalReport> reports_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> released_ ABSL_GUARDED_BY(mu_);
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  int notifications_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_TESTING_COORDINATOR_CALL_LOG_H_
