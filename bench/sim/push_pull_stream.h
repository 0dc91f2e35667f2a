#ifndef PSTRAIN_BENCH_SIM_PUSH_PULL_STREAM_H_
#define PSTRAIN_BENCH_SIM_PUSH_PULL_STREAM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace bench {

// One long-lived ParameterServer.PushPull stream, as a worker keeps one to
// each shard, carrying one exchange at a time on gRPC's callback API: no
// thread waits for its answers, so thousands of them cost no threads.
// Thread-safe, but exchanges must not overlap: call Exchange again only
// after the previous one's `done` ran.
class PushPullStream {
 public:
  // A push's outcome, or a pull's answers up to end_of_pull; or the error:
  // the shard's refusal (the message's StatusProto) or Unavailable when the
  // stream broke.
  using Done = std::function<void(absl::Status, std::vector<PushPullResponse>)>;

  // Opens the stream on `stub` (borrowed; its channel must outlive the
  // stream). The call has no deadline: it lives until Close.
  static std::shared_ptr<PushPullStream> Open(ParameterServer::Stub& stub);

  PushPullStream(const PushPullStream&) = delete;
  PushPullStream& operator=(const PushPullStream&) = delete;
  ~PushPullStream();

  // Sends `messages` (a push's pieces, or one pull) and calls `done` once,
  // on a gRPC thread, with the answer. After Close, or once the stream
  // broke, `done` gets Unavailable at once.
  void Exchange(std::vector<PushPullRequest> messages, Done done);

  // Cancels the stream; an exchange in flight ends Unavailable.
  // Idempotent. The stream's resources go once gRPC is done with it.
  void Close();

 private:
  class Reactor;
  explicit PushPullStream(std::shared_ptr<Reactor> reactor) : reactor_(std::move(reactor)) {}

  std::shared_ptr<Reactor> reactor_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_PUSH_PULL_STREAM_H_
