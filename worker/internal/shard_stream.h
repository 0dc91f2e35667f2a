#ifndef PSTRAIN_WORKER_INTERNAL_SHARD_STREAM_H_
#define PSTRAIN_WORKER_INTERNAL_SHARD_STREAM_H_

// One long-lived PushPull stream from a worker to one shard, carrying many
// exchanges (a pull's request and its answers, a push part's messages and
// its outcome), each under a tag of its own. gRPC's callback threads write
// the requests and sort the answers by tag; the caller only starts
// exchanges and waits for them, so one thread can have exchanges in flight
// on every shard at once, and no step pays for opening a stream.
//
// With a shared-memory lane open, an exchange placed in the lane sends its
// requests on the lane's own connection instead, from the caller's thread,
// and the caller that waits reads and sorts the answers (its own, and any
// other's that come first): the same messages, the same tags, without
// gRPC's thread hops, and woken by the socket itself
// (common/net/frame_connection.h). Exchanges that find no room in the lane
// keep to the gRPC stream.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/net/frame_connection.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/client_callback.h"
#include "worker/internal/incoming_answer.h"
#include "worker/internal/outgoing_request.h"
#include "worker/internal/shard_lane.h"

namespace pstrain {
namespace worker {
namespace internal {

// An exchange in flight on a ShardStream. Opaque to callers: they hold it
// between ShardStream::Start and ShardStream::Wait.
class StreamExchange;

// A shared-memory lane for a stream's tensor bytes.
struct StreamLaneOptions {
  // Bytes of the lane's segment; 0: no lane, every byte in the messages.
  int64_t segment_bytes = 0;
  // Told, on a gRPC thread, once the lane is open (OK) or why it could not
  // be; until then, and without it, exchanges keep their bytes in their
  // messages. Runs before WaitUntilDone returns.
  std::function<void(const absl::Status&)> on_opened;
};

// A PushPull stream that stays open across calls until it breaks: the
// shard ends it or goes away, Break is called, or a call runs past its
// deadline. A broken stream fails every exchange in flight and takes no
// new ones; the owner opens a new stream in its place. Thread-safe.
//
// An exchange ends with its last answer: a push result (one per push
// part), an error, or a pull answer with end_of_pull.
class ShardStream final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // Opens a stream on `channel` (kept alive by the stream). `peer` names
  // the shard in errors ("ps/1 (10.0.0.2:7000)"). With a lane, opens it
  // beside the stream, without waiting for it; an exchange started once it
  // is open moves its dense bytes through it when its region has room.
  static std::shared_ptr<ShardStream> Open(std::shared_ptr<grpc::Channel> channel, std::string peer,
                                           StreamLaneOptions lane = {});

  ShardStream(const ShardStream&) = delete;
  ShardStream& operator=(const ShardStream&) = delete;

  // Queues `requests` for sending as one exchange, their tags set to the
  // exchange's. Returns at once. `requests` (and the tensors they borrow)
  // must stay valid until Wait has returned for this exchange; the stream
  // reads none of them after that. On a broken stream the exchange has
  // already failed with Unavailable.
  std::shared_ptr<StreamExchange> Start(std::vector<OutgoingRequest>* requests);

  // Waits until `exchange` has ended or `deadline` passes, and returns its
  // answers in order. A deadline that passes breaks the stream (the shard
  // cannot be told to drop one exchange), so the other exchanges in flight
  // on it fail too. Errors:
  //   Unavailable: the stream broke (the shard went away or restarted, the
  //     connection failed, or the deadline passed); nothing is known of
  //     what the shard did with the exchange.
  //   Cancelled: Break was called with Cancelled.
  //   Internal: the shard sent an answer that does not parse, or one for
  //     no exchange in flight.
  //   Others: the stream ended with that status (e.g. Unauthenticated).
  absl::StatusOr<std::vector<IncomingAnswer>> Wait(StreamExchange& exchange, absl::Time deadline);

  // Breaks the stream: every exchange in flight fails with `why`, and the
  // call is cancelled. Later breaks change nothing.
  void Break(const absl::Status& why);

  // Whether the stream has broken (and should be replaced).
  bool broken() const;

  // Whether the stream's shared-memory lane is open: exchanges started from
  // now on move their dense bytes through it when its region has room.
  // False until the lane's opening has succeeded, and once the stream has
  // broken.
  bool lane_open() const;

  // Blocks until gRPC is done with the stream (after Break, or once the
  // shard ended it), its lane's opening has ended and its lane's
  // connection has closed: no callback runs after this returns, and the
  // stream holds no reference to itself, so the owner's are its last and
  // dropping them releases it and its channel on the owner's thread.
  void WaitUntilDone();
  // Whether all of that has happened.
  bool done() const;

  // grpc::ClientBidiReactor.
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  ShardStream(std::shared_ptr<grpc::Channel> channel, std::string peer);

  // Starts opening the stream's lane; `lane_settled_` is notified once
  // that has ended.
  void OpenLane(StreamLaneOptions options);
  // Takes `lane` for the exchanges placed in it, and starts reading
  // answers on its connection. Ok also when the stream has broken (the
  // lane is dropped).
  absl::Status AdoptLane(std::weak_ptr<ShardStream> self, std::shared_ptr<ShardLane> lane);
  // Sends the requests of `exchange`, placed in the lane, on the lane's
  // connection.
  void SendOnLane(FrameConnection& connection, StreamExchange& exchange);

  // Gives `answer` to its exchange. False: the stream broke (the answer
  // was bad or unexpected); read no further.
  bool TakeAnswer(absl::StatusOr<IncomingAnswer> answer);
  // Ends `exchange` with `status`: it no longer reads its requests, and a
  // push part cut short gets the message that ends it on the shard.
  void EndLocked(StreamExchange& exchange, absl::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fails every exchange in flight with `why` and marks the stream broken.
  void BreakLocked(const absl::Status& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Serialises the next request to send into write_bytes_, if any; false
  // when there is nothing (more) to send. Needs the writing side.
  bool NextWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the hold that lets writes start outside reactions can go now:
  // broken or ended, and no write about to start. True once.
  bool TakeHoldReleaseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const std::shared_ptr<grpc::Channel> channel_;
  const std::string peer_;
  grpc::ClientContext context_;
  // Keeps the stream alive until gRPC's last callback (OnDone), which lets
  // go of it before it notifies done_: an owner that holds the stream until
  // it is done then holds the last reference, so the stream, its context
  // and its channel are released on the owner's thread, never inside a
  // gRPC callback (gRPC's last channel or server released on one of its
  // own callback threads shuts down its callback queue from that thread,
  // which aborts the process).
  std::shared_ptr<ShardStream> self_;

  // Used by the reading side only (one OnReadDone at a time).
  grpc::ByteBuffer read_bytes_;

  mutable absl::Mutex mu_;
  // The bytes being written: filled under mu_ by whoever takes the writing
  // side (sets writing_), read by gRPC until OnWriteDone.
  grpc::ByteBuffer write_bytes_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // Exchanges with requests still to send, in order.
  std::deque<std::shared_ptr<StreamExchange>> to_send_ ABSL_GUARDED_BY(mu_);
  // Exchanges waiting for answers, by tag.
  absl::flat_hash_map<uint64_t, std::shared_ptr<StreamExchange>> in_flight_ ABSL_GUARDED_BY(mu_);
  uint64_t next_tag_ ABSL_GUARDED_BY(mu_) = 1;
  // Set once the stream has broken: why.
  std::optional<absl::Status> broken_ ABSL_GUARDED_BY(mu_);
  // The read side has ended: OnDone is on its way with the status.
  bool reads_ended_ ABSL_GUARDED_BY(mu_) = false;
  bool hold_released_ ABSL_GUARDED_BY(mu_) = false;
  // Notified by OnDone once it holds no reference to the stream; shared,
  // so that it outlives a stream whose owner let go early.
  const std::shared_ptr<absl::Notification> done_ = std::make_shared<absl::Notification>();
  // The lane, once open (never on a broken stream), and how to stop its
  // opening.
  std::shared_ptr<ShardLane> lane_ ABSL_GUARDED_BY(mu_);
  std::function<void()> cancel_lane_ ABSL_GUARDED_BY(mu_);
  // The lane's connection, once the lane is open; kept (closed) once the
  // stream breaks, until the stream goes. Notified when its thread has
  // ended.
  std::unique_ptr<FrameConnection> lane_connection_ ABSL_GUARDED_BY(mu_);
  const std::shared_ptr<absl::Notification> lane_closed_ = std::make_shared<absl::Notification>();
  // Shared with the opening's callback, which notifies it only once it
  // holds no reference to the stream: the owner may then drop the stream
  // and its channel, which are never released from inside a gRPC
  // callback.
  const std::shared_ptr<absl::Notification> lane_settled_ = std::make_shared<absl::Notification>();
};

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_SHARD_STREAM_H_
