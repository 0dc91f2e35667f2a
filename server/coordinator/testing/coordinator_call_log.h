#ifndef PSTRAIN_SERVER_COORDINATOR_TESTING_COORDINATOR_CALL_LOG_H_
#define PSTRAIN_SERVER_COORDINATOR_TESTING_COORDINATOR_CALL_LOG_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace pstrain {
namespace coordinator {

// What a member told a coordinator's ClusterService and heard back,
// recorded by a client interceptor on the member's channel: every call the
// coordinator accepted (answered OK), with its request as sent and its
// answer, and the messages of its server streams (WatchCheckpoints). Lets
// a test run a member against the real coordinator and still see each call
// as it was made. Methods are named without their service
// ("ReportProgress"). Thread-safe.
class CoordinatorCallLog {
 public:
  CoordinatorCallLog() = default;

  CoordinatorCallLog(const CoordinatorCallLog&) = delete;
  CoordinatorCallLog& operator=(const CoordinatorCallLog&) = delete;

  // A plaintext channel to `address` whose ClusterService calls are
  // recorded here. The log must outlive the channel.
  std::shared_ptr<grpc::Channel> NewChannel(const std::string& address);

  // The requests of the accepted calls of `method`, in the order they were
  // answered, parsed as `Request`.
  template <typename Request>
  std::vector<Request> Requests(absl::string_view method) const {
    return Parse<Request>(Recorded(method, &Call::request));
  }
  // Their answers, in the same order; empty for a server stream.
  template <typename Response>
  std::vector<Response> Responses(absl::string_view method) const {
    return Parse<Response>(Recorded(method, &Call::response));
  }
  // Accepted calls of `method` so far.
  size_t Count(absl::string_view method) const;
  // Blocks until the coordinator accepted `count` calls of `method` or
  // `timeout` (real time) passed; whether it did.
  bool WaitForCalls(absl::string_view method, size_t count, absl::Duration timeout) const;
  // Blocks until the member received `count` messages on streams of
  // `method` or `timeout` (real time) passed; whether it did.
  bool WaitForStreamed(absl::string_view method, size_t count, absl::Duration timeout) const;

 private:
  class Recorder;
  class RecorderFactory;

  struct Call {
    std::string method;
    std::string request;
    std::string response;
  };

  template <typename Message>
  static std::vector<Message> Parse(const std::vector<std::string>& serialized) {
    std::vector<Message> messages;
    for (const std::string& bytes : serialized) {
      Message message;
      if (message.ParseFromString(bytes)) messages.push_back(std::move(message));
    }
    return messages;
  }

  std::vector<std::string> Recorded(absl::string_view method, std::string Call::*field) const;
  // A call of `method` with the serialized `request` was answered OK with
  // `response`.
  void Accepted(Call call);
  void Streamed(const std::string& method);

  mutable absl::Mutex mu_;
  std::vector<Call> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> streamed_ ABSL_GUARDED_BY(mu_);  // a method per message
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TESTING_COORDINATOR_CALL_LOG_H_
