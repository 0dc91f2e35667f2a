#ifndef PSTRAIN_SERVER_PS_TESTING_FAULTY_WIRE_H_
#define PSTRAIN_SERVER_PS_TESTING_FAULTY_WIRE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {

// One attempt at a push as it crossed a FaultyWire: its messages (every
// part) from the first until each part's end_of_push, and the answer that
// decided it. A retry of the same PushId after that is a new attempt.
struct WirePush {
  PushId id;
  int num_parts = 1;
  // Messages of every part, and the parts whose end_of_push has passed.
  int messages = 0;
  int parts_ended = 0;
  int64_t base_version = 0;
  int64_t examples = 0;
  // The records the gradients came from, if the push named them.
  std::optional<PushOrigin> origin;
  // The answer that decided the push (not PART_RECEIVED); outcome
  // UNSPECIFIED while none has come.
  PushResult answer;
  // The answer never reached the worker (DropAnswerOf).
  bool answer_dropped = false;
  // A pull asking for a version past this push's base (one that waits for
  // the end of the sync round the push joins) crossed the wire before the
  // push's answer went down to the worker: with one worker on the wire,
  // that worker pulled without waiting for that answer (with DelayAnswers,
  // whatever the shard's speed).
  bool round_pulled_before_answer = false;
};

// A gRPC proxy in front of a server, in the test's process, serving on
// 127.0.0.1 at a port of its own: every call is forwarded to the target as
// it is, message by message, so clients talk to the real server through
// it. On ParameterServer.PushPull streams the test can make the wire fail
// as networks and overloaded shards do -- lose the answer of a push the
// shard applied, hold answers back, refuse a push before it reaches the
// shard -- and read what crossed it. Thread-safe.
class FaultyWire {
 public:
  // Forwards to `target` (host:port, plaintext). Internal: the wire cannot
  // listen on 127.0.0.1.
  static absl::StatusOr<std::unique_ptr<FaultyWire>> Start(const std::string& target);
  ~FaultyWire();

  FaultyWire(const FaultyWire&) = delete;
  FaultyWire& operator=(const FaultyWire&) = delete;

  // "127.0.0.1:<port>", where clients connect.
  const std::string& address() const { return address_; }

  // Stops serving at once: calls in flight end with Unavailable or
  // Cancelled, and the port no longer answers, as when the shard's host is
  // gone. The target keeps running.
  void Shutdown();

  // The next decided answer (not PART_RECEIVED) to a push with this
  // sequence number is lost after the shard has sent it: the stream that
  // carried it ends with Unavailable instead. Once.
  void DropAnswerOf(uint64_t sequence);
  // Every attempt at a push with this sequence number is refused by the
  // wire before it reaches the shard: each part's first message is
  // answered REJECTED with `status`, and its messages go no further.
  void RefusePush(uint64_t sequence, absl::Status status);
  // Calls of `method` (as the service names it: "DropJob") are refused
  // with `status` before they reach the server, as a shard that cannot
  // serve them would.
  void RefuseCalls(const std::string& method, absl::Status status);
  // Runs `meanwhile` once, when the first message of a push with this
  // sequence number arrives, before it goes on to the shard: what happened
  // at the shard in between (another worker's pushes). It runs on a gRPC
  // thread and must not wait for this wire.
  void BeforePush(uint64_t sequence, std::function<void()> meanwhile);
  // Forgets every fault asked for: the wire forwards everything again.
  void ClearFaults();
  // PushPull answers reach the worker `delay` after the shard sent them,
  // in order (a slow link, or a shard too busy to answer). Zero (the
  // default) stops delaying answers that come from then on.
  void DelayAnswers(absl::Duration delay);

  // Every push attempt seen, in the order their first messages came.
  std::vector<WirePush> pushes() const;
  // PushPull streams opened, and pull requests sent on them.
  int streams_opened() const;
  int pulls() const;
  // The largest PushPull request message, serialised.
  int64_t largest_request_bytes() const;

 private:
  class ProxiedCall;
  class RefusedCall;
  class Forwarder;
  using PushKey = std::tuple<int32_t, uint64_t, uint64_t>;

  FaultyWire() = default;

  // What the wire does with one request of a PushPull stream (`bytes`
  // long), called for each in order.
  struct Verdict {
    // False: the message goes no further.
    bool forward = true;
    // The answer the wire sends the worker itself.
    std::optional<PushPullResponse> answer;
    // To run before the message goes on (BeforePush).
    std::function<void()> meanwhile;
  };
  Verdict OnRequest(const PushPullRequest& request, int64_t bytes,
                    std::set<uint64_t>& refused_tags);
  // Records an answer of a PushPull stream; whether to drop it (and end
  // the stream).
  bool OnAnswer(const PushPullResponse& answer);
  // An answer of a PushPull stream went down to the worker.
  void OnAnswerPassed(const PushPullResponse& answer);
  absl::Duration answer_delay() const;
  // The refusal of calls of `method` (a full gRPC method name), if any.
  std::optional<absl::Status> CallRefusal(const std::string& method) const;
  void CallStarted(bool push_pull);
  void CallEnded();

  std::string address_;
  std::unique_ptr<grpc::GenericStub> target_;
  std::unique_ptr<Forwarder> forwarder_;
  std::unique_ptr<grpc::Server> server_;

  mutable absl::Mutex mu_;
  // Calls whose reactors have not both finished: Shutdown waits for them.
  int calls_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::map<uint64_t, int> drop_answers_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, absl::Status> refused_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::function<void()>> before_push_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> refused_calls_ ABSL_GUARDED_BY(mu_);
  absl::Duration delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  std::vector<WirePush> pushes_ ABSL_GUARDED_BY(mu_);
  // Attempts whose parts have not all ended or that are not decided yet:
  // index into pushes_.
  std::map<PushKey, size_t> open_ ABSL_GUARDED_BY(mu_);
  // Attempts whose answer has not gone down to the worker: index into
  // pushes_.
  std::map<PushKey, size_t> unanswered_ ABSL_GUARDED_BY(mu_);
  // The highest min_version of the pull requests seen.
  int64_t highest_pulled_version_ ABSL_GUARDED_BY(mu_) = 0;
  int streams_opened_ ABSL_GUARDED_BY(mu_) = 0;
  int pulls_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t largest_request_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_TESTING_FAULTY_WIRE_H_
