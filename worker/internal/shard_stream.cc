#include "worker/internal/shard_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"
#include "grpcpp/generic/generic_stub.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

constexpr char kPushPullMethod[] = "/pstrain.ParameterServer/PushPull";
// Longest answer taken on a lane's connection. A lane's answers keep their
// values in the segment, so this only bounds what a faulty shard could
// make this process buffer.
constexpr int64_t kMaxLaneAnswerBytes = int64_t{1} << 30;

// Whether `answer` is the last of its exchange.
bool EndsExchange(const PushPullResponse& answer) {
  return !answer.has_pull() || answer.pull().end_of_pull();
}

}  // namespace

class StreamExchange {
 public:
  explicit StreamExchange(std::vector<OutgoingRequest>* requests) : requests_(requests) {}

 private:
  friend class ShardStream;

  // Borrowed from the caller of Start until the exchange ends (or
  // `placed_`), then null; guarded by the stream's mu_ like everything
  // below but `placed_` and `region_`, which are set before the exchange
  // is shared.
  std::vector<OutgoingRequest>* requests_;
  // With a lane: the requests as placed in it, its region, which answers
  // hold too.
  std::vector<OutgoingRequest> placed_;
  std::shared_ptr<SegmentRegion> region_;
  uint64_t tag_ = 0;
  size_t sent_ = 0;  // requests serialised so far
  // Sent on the lane's connection, where its answers come.
  bool on_lane_ = false;
  std::vector<IncomingAnswer> answers_;
  // Set when the exchange has ended: OK with its last answer, else why not.
  std::optional<absl::Status> ended_;
  // The message that ends a push part answered before it was all sent.
  std::optional<OutgoingRequest> closing_;
};

std::shared_ptr<ShardStream> ShardStream::Open(std::shared_ptr<grpc::Channel> channel,
                                               std::string peer, StreamLaneOptions lane) {
  std::shared_ptr<ShardStream> stream(new ShardStream(std::move(channel), std::move(peer)));
  stream->self_ = stream;
  stream->OpenLane(std::move(lane));
  grpc::GenericStub stub(stream->channel_);
  stub.PrepareBidiStreamingCall(&stream->context_, kPushPullMethod, grpc::StubOptions(),
                                stream.get());
  // Writes start from callers' threads, outside any reaction: the hold
  // keeps the call open for them until the stream breaks.
  stream->AddHold();
  stream->StartRead(&stream->read_bytes_);
  stream->StartCall();
  return stream;
}

ShardStream::ShardStream(std::shared_ptr<grpc::Channel> channel, std::string peer)
    : channel_(std::move(channel)), peer_(std::move(peer)) {}

void ShardStream::OpenLane(StreamLaneOptions options) {
  if (options.segment_bytes <= 0) {
    lane_settled_->Notify();
    return;
  }
  std::weak_ptr<ShardStream> weak = self_;
  std::function<void()> cancel = ShardLane::OpenAsync(
      channel_, options.segment_bytes,
      [weak, settled = lane_settled_,
       on_opened = std::move(options.on_opened)](absl::StatusOr<std::shared_ptr<ShardLane>> lane) {
        absl::Status status = lane.status();
        if (std::shared_ptr<ShardStream> stream = weak.lock(); stream != nullptr && lane.ok()) {
          status = stream->AdoptLane(weak, *std::move(lane));
        }
        if (on_opened) on_opened(status);
        settled->Notify();
      });
  absl::MutexLock l(&mu_);
  cancel_lane_ = std::move(cancel);
}

absl::Status ShardStream::AdoptLane(std::weak_ptr<ShardStream> self,
                                    std::shared_ptr<ShardLane> lane) {
  FrameHandlers handlers;
  handlers.on_frame = [self](std::string frame) {
    std::shared_ptr<ShardStream> stream = self.lock();
    if (stream == nullptr) return;
    grpc::Slice slice(frame);
    stream->TakeAnswer(IncomingAnswer::Parse(grpc::ByteBuffer(&slice, 1)));
  };
  handlers.on_closed = [self, closed = lane_closed_](const absl::Status& why) {
    if (std::shared_ptr<ShardStream> stream = self.lock(); stream != nullptr) {
      // Nothing once this stream broke (which closed the connection).
      stream->Break(absl::UnavailableError(
          absl::StrCat(stream->peer_, " closed the shared-memory lane: ", why.message())));
    }
    // Only once this holds no reference to the stream: see lane_settled_.
    closed->Notify();
  };
  absl::MutexLock l(&mu_);
  if (broken_.has_value() || reads_ended_) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<FrameConnection>> connection = FrameConnection::Start(
      lane->TakeSocket(), kMaxLaneAnswerBytes, std::move(handlers), FrameReading::kByCaller);
  if (!connection.ok()) return connection.status();
  lane_connection_ = *std::move(connection);
  lane_ = std::move(lane);
  return absl::OkStatus();
}

std::shared_ptr<StreamExchange> ShardStream::Start(std::vector<OutgoingRequest>* requests) {
  auto exchange = std::make_shared<StreamExchange>(requests);
  std::shared_ptr<ShardLane> lane;
  {
    absl::MutexLock l(&mu_);
    lane = lane_;
  }
  if (lane != nullptr) {
    int64_t answer_bytes = 0;
    for (const OutgoingRequest& request : *requests) answer_bytes += request.answer_bytes;
    // Copied into the segment here, on the caller's thread, not under the
    // stream's lock.
    exchange->region_ = lane->Place(*requests, answer_bytes, &exchange->placed_);
    if (exchange->region_ != nullptr) exchange->requests_ = &exchange->placed_;
  }
  bool write = false;
  FrameConnection* on_lane = nullptr;
  {
    absl::MutexLock l(&mu_);
    if (broken_.has_value()) {
      EndLocked(*exchange, *broken_);
      return exchange;
    }
    exchange->tag_ = next_tag_++;
    in_flight_[exchange->tag_] = exchange;
    // The call failed and OnDone, which brings gRPC's reason ("failed to
    // connect"), is on its way: it ends this exchange with that reason.
    if (reads_ended_) return exchange;
    if (exchange->region_ != nullptr && lane_connection_ != nullptr) {
      // All of it goes now, below, so no part is ever cut short.
      exchange->sent_ = exchange->requests_->size();
      exchange->on_lane_ = true;
      on_lane = lane_connection_.get();  // kept until the stream goes
    } else {
      to_send_.push_back(exchange);
      if (!writing_) write = writing_ = NextWriteLocked();
    }
  }
  if (on_lane != nullptr) SendOnLane(*on_lane, *exchange);
  if (write) StartWrite(&write_bytes_);
  return exchange;
}

void ShardStream::SendOnLane(FrameConnection& connection, StreamExchange& exchange) {
  // The placed requests belong to the exchange, and nothing else reads
  // them once it is on the lane.
  for (OutgoingRequest& request : exchange.placed_) {
    request.message.set_tag(exchange.tag_);
    const absl::Status sent = connection.Send(request.message.SerializeAsString());
    if (!sent.ok()) {
      Break(absl::UnavailableError(
          absl::StrCat(peer_, ": cannot send on the shared-memory lane: ", sent.message())));
      return;
    }
  }
}

bool ShardStream::NextWriteLocked() {
  while (!to_send_.empty()) {
    StreamExchange& front = *to_send_.front();
    if (front.closing_.has_value()) {
      write_bytes_ = SerializeRequest(*front.closing_);
      front.closing_.reset();
      return true;
    }
    if (front.requests_ == nullptr || front.sent_ >= front.requests_->size()) {
      to_send_.pop_front();
      continue;
    }
    OutgoingRequest& request = (*front.requests_)[front.sent_++];
    request.message.set_tag(front.tag_);
    // Serialised here, under the lock, so that a caller whose exchange
    // has ended (and who may then reuse the tensors it borrowed) never
    // races with this copy.
    write_bytes_ = SerializeRequest(request);
    return true;
  }
  return false;
}

void ShardStream::EndLocked(StreamExchange& exchange, absl::Status status) {
  exchange.ended_ = std::move(status);
  std::vector<OutgoingRequest>* requests = exchange.requests_;
  // From here on the caller may free the requests and what they borrow.
  exchange.requests_ = nullptr;
  if (!exchange.ended_->ok() || exchange.sent_ == 0 || exchange.sent_ >= requests->size() ||
      !(*requests)[exchange.sent_].message.has_push()) {
    return;
  }
  // A push part answered before it was all sent (a shard refuses a part
  // at its first bad message): the rest of its gradients are not sent,
  // but the part must still end on the shard, which keeps it open until
  // end_of_push. It answers nothing more.
  OutgoingRequest& closing = exchange.closing_.emplace();
  closing.message.set_tag(exchange.tag_);
  *closing.message.mutable_push() = (*requests)[exchange.sent_].message.push();
  closing.message.mutable_push()->clear_gradients();
  closing.message.mutable_push()->set_end_of_push(true);
}

absl::StatusOr<std::vector<IncomingAnswer>> ShardStream::Wait(StreamExchange& exchange,
                                                              absl::Time deadline) {
  FrameConnection* lane = nullptr;
  {
    absl::MutexLock l(&mu_);
    if (exchange.on_lane_ && !exchange.ended_.has_value()) lane = lane_connection_.get();
  }
  if (lane != nullptr) {
    // The answers are read here, on the waiting thread, which the socket
    // wakes. Whatever ends the reading, the wait below learns how the
    // exchange ended: at once, or when the stream breaks (a lane that
    // ended breaks it from its connection's thread), or at the deadline.
    lane->Receive(
            [this, &exchange] {
              absl::MutexLock l(&mu_);
              return exchange.ended_.has_value();
            },
            deadline)
        .IgnoreError();
  }
  mu_.Lock();
  const bool ended = mu_.AwaitWithDeadline(
      absl::Condition(
          +[](StreamExchange* e) { return e->ended_.has_value(); }, &exchange),
      deadline);
  if (!ended) {
    BreakLocked(
        absl::UnavailableError(absl::StrCat(peer_, " gave no answer within the call deadline")));
  }
  absl::Status status = *exchange.ended_;
  std::vector<IncomingAnswer> answers = std::move(exchange.answers_);
  const bool release = TakeHoldReleaseLocked();
  mu_.Unlock();
  if (!ended) context_.TryCancel();
  if (release) RemoveHold();
  if (!status.ok()) return status;
  return answers;
}

void ShardStream::Break(const absl::Status& why) {
  bool release;
  std::function<void()> cancel_lane;
  {
    absl::MutexLock l(&mu_);
    BreakLocked(why);
    release = TakeHoldReleaseLocked();
    cancel_lane = cancel_lane_;
  }
  if (cancel_lane) cancel_lane();
  context_.TryCancel();
  if (release) RemoveHold();
}

void ShardStream::BreakLocked(const absl::Status& why) {
  if (broken_.has_value()) return;
  broken_ = why;
  // The shard drops the lane when its connection closes; the segment goes
  // once the exchanges holding regions of it let go.
  if (lane_connection_ != nullptr) lane_connection_->Close();
  lane_.reset();
  for (auto& [tag, exchange] : in_flight_) {
    if (!exchange->ended_.has_value()) EndLocked(*exchange, why);
    exchange->answers_.clear();
  }
  in_flight_.clear();
  to_send_.clear();
}

bool ShardStream::TakeHoldReleaseLocked() {
  if (!(broken_.has_value() || reads_ended_) || writing_ || hold_released_) return false;
  hold_released_ = true;
  return true;
}

bool ShardStream::broken() const {
  absl::MutexLock l(&mu_);
  return broken_.has_value() || reads_ended_;
}

bool ShardStream::lane_open() const {
  absl::MutexLock l(&mu_);
  return lane_ != nullptr;
}

void ShardStream::WaitUntilDone() {
  done_->WaitForNotification();
  lane_settled_->WaitForNotification();
  bool lane;
  {
    absl::MutexLock l(&mu_);
    lane = lane_connection_ != nullptr;
  }
  if (lane) lane_closed_->WaitForNotification();
}

bool ShardStream::done() const {
  if (!done_->HasBeenNotified() || !lane_settled_->HasBeenNotified()) return false;
  absl::MutexLock l(&mu_);
  return lane_connection_ == nullptr || lane_closed_->HasBeenNotified();
}

void ShardStream::OnWriteDone(bool ok) {
  bool write = false, release = false;
  {
    absl::MutexLock l(&mu_);
    // A failed write means the stream is gone; the read side sees it too
    // and OnDone brings the reason.
    if (ok && !broken_.has_value() && !reads_ended_) write = NextWriteLocked();
    writing_ = write;
    release = TakeHoldReleaseLocked();
  }
  if (write) StartWrite(&write_bytes_);
  if (release) RemoveHold();
}

void ShardStream::OnReadDone(bool ok) {
  if (!ok) {
    // The shard ended the stream or the call failed. Exchanges in flight
    // wait for OnDone, which brings the status (Unauthenticated is not
    // worth a retry; a restarted shard is); none starts any more.
    bool release;
    {
      absl::MutexLock l(&mu_);
      reads_ended_ = true;
      release = TakeHoldReleaseLocked();
    }
    if (release) RemoveHold();
    return;
  }
  absl::StatusOr<IncomingAnswer> answer = IncomingAnswer::Parse(read_bytes_);
  read_bytes_.Clear();
  if (TakeAnswer(std::move(answer))) StartRead(&read_bytes_);
}

bool ShardStream::TakeAnswer(absl::StatusOr<IncomingAnswer> answer) {
  if (!answer.ok()) {
    Break(absl::InternalError(absl::StrCat(peer_, " answered with ", answer.status().message())));
    return false;
  }
  const uint64_t tag = answer->message().tag();
  const bool last = EndsExchange(answer->message());
  bool stray = false;
  absl::Status unreadable;
  {
    absl::MutexLock l(&mu_);
    auto it = in_flight_.find(tag);
    if (it != in_flight_.end() && it->second->region_ != nullptr) {
      unreadable = answer->ReadSharedFrom(it->second->region_);
    }
    if (!unreadable.ok()) {
      // Handled below, once the lock is let go.
    } else if (it != in_flight_.end()) {
      StreamExchange& exchange = *it->second;
      exchange.answers_.push_back(*std::move(answer));
      if (last) {
        EndLocked(exchange, absl::OkStatus());
        in_flight_.erase(it);
      }
    } else {
      // Exchanges leave in_flight_ only with their last answer or when the
      // stream breaks, so this is a shard that answers what was not asked.
      stray = !broken_.has_value();
    }
  }
  if (!unreadable.ok()) {
    Break(absl::InternalError(absl::StrCat(peer_, " answered with ", unreadable.message())));
    return false;
  }
  if (stray) {
    Break(absl::InternalError(
        absl::StrCat(peer_, " answered tag ", tag, ", which no call is waiting for")));
    return false;
  }
  return true;
}

void ShardStream::OnDone(const grpc::Status& status) {
  {
    absl::MutexLock l(&mu_);
    // Exchanges still in flight learn why the stream ended. A cancelled
    // call is one this side broke, which set its own reason already.
    absl::Status why = FromGrpcStatus(status);
    if (why.ok() || absl::IsCancelled(why) || absl::IsDeadlineExceeded(why)) {
      why = absl::UnavailableError(absl::StrCat(peer_, " ended the stream"));
    } else {
      why = WithPrefix(why, absl::StrCat(peer_, ": "));
    }
    BreakLocked(why);
  }
  // Let go of the stream first (see self_): once done_ is notified the
  // owner may drop it, and the last reference must be the owner's.
  const std::shared_ptr<absl::Notification> done = done_;
  self_.reset();
  // Nothing may touch members from here: the stream may be gone.
  done->Notify();
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
