#include "server/ps/testing/faulty_wire.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "grpcpp/alarm.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace pstrain {
namespace {

constexpr char kPushPull[] = "/pstrain.ParameterServer/PushPull";

// Parses a copy, so `bytes` stays as it is to be forwarded.
template <typename Message>
bool Parse(const grpc::ByteBuffer& bytes, Message* message) {
  grpc::ByteBuffer copy(bytes);
  return grpc::SerializationTraits<Message>::Deserialize(&copy, message).ok();
}

grpc::ByteBuffer Serialize(const PushPullResponse& answer) {
  grpc::ByteBuffer bytes;
  bool own_buffer;
  grpc::SerializationTraits<PushPullResponse>::Serialize(answer, &bytes, &own_buffer);
  return bytes;
}

}  // namespace

// One forwarded call: the caller's side is this server reactor, the
// target's side a client reactor (Upstream). Requests go up one at a time
// (the next is read once the last is written), answers come down through
// a queue, so neither side buffers more than a message or the answers
// being held. The upstream call has two holds: the request flow (released
// once no more requests will be written up) and the answer flow (released
// once no more answers will be read), since both are also driven from
// outside its own reactions. Deletes itself once both sides are done. No
// lock is held while calling into gRPC.
class FaultyWire::ProxiedCall final : public grpc::ServerGenericBidiReactor {
 public:
  ProxiedCall(FaultyWire& wire, grpc::GenericCallbackServerContext* context)
      : wire_(wire), push_pull_(context->method() == kPushPull), upstream_(*this) {
    wire_.CallStarted(push_pull_);
    if (context->deadline() != std::chrono::system_clock::time_point::max()) {
      upstream_context_.set_deadline(context->deadline());
    }
    wire_.target_->PrepareBidiStreamingCall(&upstream_context_, context->method(),
                                            grpc::StubOptions(), &upstream_);
    upstream_.AddMultipleHolds(2);
    upstream_.StartRead(&answer_);
    upstream_.StartCall();
    StartRead(&request_);
  }

  // The caller's side.
  void OnReadDone(bool ok) override {
    if (!ok) return EndRequests();
    if (push_pull_) {
      PushPullRequest request;
      if (Parse(request_, &request)) {
        Verdict verdict =
            wire_.OnRequest(request, static_cast<int64_t>(request_.Length()), refused_tags_);
        if (verdict.meanwhile) verdict.meanwhile();
        if (verdict.answer.has_value()) Send(Serialize(*verdict.answer));
        if (!verdict.forward) return ReadNextRequest();
      }
    }
    {
      absl::MutexLock l(&mu_);
      // The target's side is over: the caller hears so soon; drop what it
      // still sends.
      if (upstream_closed_) return ReadNextRequest();
      forwarding_ = true;
    }
    forwarded_.Swap(&request_);
    upstream_.StartWrite(&forwarded_);
  }

  void OnWriteDone(bool ok) override {
    const grpc::ByteBuffer* next = nullptr;
    bool finish = false;
    {
      absl::MutexLock l(&mu_);
      outgoing_.pop_front();
      if (!ok) outgoing_.clear();
      if (!outgoing_.empty()) {
        next = &outgoing_.front();
      } else {
        writing_ = false;
        finish = ShouldFinish();
      }
    }
    if (!ok) upstream_context_.TryCancel();
    if (next != nullptr) StartWrite(next);
    if (finish) FinishNow();
  }

  void OnCancel() override {
    upstream_context_.TryCancel();
    std::vector<grpc::Alarm*> holds;
    {
      absl::MutexLock l(&mu_);
      cancelled_ = true;
      for (const std::unique_ptr<grpc::Alarm>& hold : holds_) holds.push_back(hold.get());
    }
    // Held answers go at once (and fail: the caller is gone).
    for (grpc::Alarm* hold : holds) hold->Cancel();
  }

  void OnDone() override { SideDone(); }

 private:
  class Upstream final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
   public:
    explicit Upstream(ProxiedCall& call) : call_(call) {}
    void OnReadDone(bool ok) override { call_.OnAnswer(ok); }
    void OnWriteDone(bool ok) override { call_.OnForwarded(ok); }
    void OnDone(const grpc::Status& status) override { call_.OnUpstreamDone(status); }

   private:
    ProxiedCall& call_;
  };

  // The target's side.
  void OnAnswer(bool ok) {
    if (!ok) return CloseUpstream();
    PushPullResponse answer;
    if (push_pull_ && Parse(answer_, &answer) && wire_.OnAnswer(answer)) {
      // Lost: the caller's stream ends as over a broken connection.
      End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the answer was lost on the wire"),
          Queued::kDrop);
      upstream_context_.TryCancel();
      return CloseUpstream();
    }
    const absl::Duration delay = push_pull_ ? wire_.answer_delay() : absl::ZeroDuration();
    {
      absl::MutexLock l(&mu_);
      if (delay > absl::ZeroDuration() && !cancelled_) {
        // Set under the lock, so OnCancel cannot miss it; the alarm calls
        // back on another thread.
        holds_.emplace_back(std::make_unique<grpc::Alarm>())
            ->Set(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(delay),
                  [this](bool /*fired*/) { PassAnswerDown(); });
        return;
      }
    }
    PassAnswerDown();
  }

  void PassAnswerDown() {
    PushPullResponse parsed;
    if (push_pull_ && Parse(answer_, &parsed)) wire_.OnAnswerPassed(parsed);
    grpc::ByteBuffer answer;
    answer.Swap(&answer_);
    Send(std::move(answer));
    upstream_.StartRead(&answer_);
  }

  void OnForwarded(bool ok) {
    bool release;
    {
      absl::MutexLock l(&mu_);
      forwarding_ = false;
      if (!ok) upstream_closed_ = true;
      release = upstream_closed_ && ReleaseRequestHold();
    }
    if (release) upstream_.RemoveHold();
    ReadNextRequest();
  }

  void OnUpstreamDone(const grpc::Status& status) {
    End(status, Queued::kWrite);
    SideDone();
  }

  // No more answers will be read from the target.
  void CloseUpstream() {
    bool release;
    {
      absl::MutexLock l(&mu_);
      upstream_closed_ = true;
      release = !forwarding_ && ReleaseRequestHold();
    }
    if (release) upstream_.RemoveHold();
    upstream_.RemoveHold();  // the answer flow's
  }

  // Reads the caller's next request, unless its side has finished (then
  // no request will come: the request flow ends). A read started while
  // Finish is not yet called keeps the caller's side alive, so Finish
  // waits for reads being started.
  void ReadNextRequest() {
    bool over;
    bool release = false;
    {
      absl::MutexLock l(&mu_);
      over = finished_;
      if (over) {
        release = ReleaseRequestHold();
      } else {
        ++starting_reads_;
      }
    }
    if (release) upstream_.RemoveHold();
    if (over) return;
    request_.Clear();
    StartRead(&request_);
    bool finish;
    {
      absl::MutexLock l(&mu_);
      --starting_reads_;
      finish = ShouldFinish();
    }
    if (finish) FinishNow();
  }

  // The caller sends no more requests.
  void EndRequests() {
    bool release;
    {
      absl::MutexLock l(&mu_);
      release = ReleaseRequestHold();
    }
    if (!release) return;
    upstream_.StartWritesDone();
    upstream_.RemoveHold();
  }

  bool ReleaseRequestHold() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (request_hold_released_) return false;
    request_hold_released_ = true;
    return true;
  }

  // Queues `answer` for the caller, unless its side is ending.
  void Send(grpc::ByteBuffer answer) {
    const grpc::ByteBuffer* write = nullptr;
    {
      absl::MutexLock l(&mu_);
      if (end_status_.has_value()) return;
      outgoing_.push_back(std::move(answer));
      if (!writing_) {
        writing_ = true;
        write = &outgoing_.front();
      }
    }
    if (write != nullptr) StartWrite(write);
  }

  // What ending the caller's side does with the answers queued for it.
  enum class Queued {
    kWrite,  // end once they are written
    kDrop,   // end at once without them, as a broken connection does
  };
  // Ends the caller's side with `status`. The first call decides.
  void End(const grpc::Status& status, Queued queued) {
    bool finish;
    {
      absl::MutexLock l(&mu_);
      if (end_status_.has_value()) return;
      end_status_ = status;
      if (queued == Queued::kDrop && !outgoing_.empty()) {
        // The front may be being written; the rest never will be.
        outgoing_.erase(outgoing_.begin() + (writing_ ? 1 : 0), outgoing_.end());
      }
      finish = ShouldFinish();
    }
    if (finish) FinishNow();
  }

  bool ShouldFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || !end_status_.has_value() || writing_ || starting_reads_ > 0) return false;
    finished_ = true;
    return true;
  }

  // After ShouldFinish said so.
  void FinishNow() {
    grpc::Status status;
    {
      absl::MutexLock l(&mu_);
      status = *end_status_;
    }
    Finish(status);
  }

  void SideDone() {
    bool last;
    {
      absl::MutexLock l(&mu_);
      last = --sides_left_ == 0;
    }
    if (!last) return;
    FaultyWire& wire = wire_;
    delete this;
    wire.CallEnded();
  }

  FaultyWire& wire_;
  const bool push_pull_;
  grpc::ClientContext upstream_context_;
  Upstream upstream_;

  // The request flow's (one request at a time).
  grpc::ByteBuffer request_;
  grpc::ByteBuffer forwarded_;
  std::set<uint64_t> refused_tags_;
  // The answer flow's (one answer at a time).
  grpc::ByteBuffer answer_;

  absl::Mutex mu_;
  // The front is being written to the caller while writing_.
  std::deque<grpc::ByteBuffer> outgoing_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // A request is being written to the target.
  bool forwarding_ ABSL_GUARDED_BY(mu_) = false;
  // No more answers come from the target.
  bool upstream_closed_ ABSL_GUARDED_BY(mu_) = false;
  bool request_hold_released_ ABSL_GUARDED_BY(mu_) = false;
  // How the caller's side ends, once known.
  std::optional<grpc::Status> end_status_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Reads of the caller's requests being started from outside its
  // reactions.
  int starting_reads_ ABSL_GUARDED_BY(mu_) = 0;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  // Alarms of answers held back; each fires once.
  std::vector<std::unique_ptr<grpc::Alarm>> holds_ ABSL_GUARDED_BY(mu_);
  int sides_left_ ABSL_GUARDED_BY(mu_) = 2;
};

// A call the wire refuses (RefuseCalls): ends at once with the refusal.
class FaultyWire::RefusedCall final : public grpc::ServerGenericBidiReactor {
 public:
  explicit RefusedCall(const absl::Status& status) { Finish(ToGrpcStatus(status)); }
  void OnDone() override { delete this; }
};

class FaultyWire::Forwarder final : public grpc::CallbackGenericService {
 public:
  explicit Forwarder(FaultyWire& wire) : wire_(wire) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    if (std::optional<absl::Status> refusal = wire_.CallRefusal(context->method())) {
      return new RefusedCall(*refusal);
    }
    return new ProxiedCall(wire_, context);
  }

 private:
  FaultyWire& wire_;
};

absl::StatusOr<std::unique_ptr<FaultyWire>> FaultyWire::Start(const std::string& target) {
  std::unique_ptr<FaultyWire> wire(new FaultyWire());
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);
  arguments.SetMaxSendMessageSize(-1);
  wire->target_ = std::make_unique<grpc::GenericStub>(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), arguments));
  wire->forwarder_ = std::make_unique<Forwarder>(*wire);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(-1);
  builder.RegisterCallbackGenericService(wire->forwarder_.get());
  wire->server_ = builder.BuildAndStart();
  if (wire->server_ == nullptr || port == 0) {
    return absl::InternalError("the faulty wire cannot listen on 127.0.0.1");
  }
  wire->address_ = absl::StrCat("127.0.0.1:", port);
  return wire;
}

FaultyWire::~FaultyWire() { Shutdown(); }

void FaultyWire::Shutdown() {
  {
    absl::MutexLock l(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  // The target's side of a call may end after the caller's.
  absl::MutexLock l(&mu_);
  mu_.Await(absl::Condition(
      +[](int* calls) { return *calls == 0; }, &calls_in_flight_));
}

void FaultyWire::DropAnswerOf(uint64_t sequence) {
  absl::MutexLock l(&mu_);
  ++drop_answers_[sequence];
}

void FaultyWire::RefusePush(uint64_t sequence, absl::Status status) {
  absl::MutexLock l(&mu_);
  refused_[sequence] = std::move(status);
}

void FaultyWire::BeforePush(uint64_t sequence, std::function<void()> meanwhile) {
  absl::MutexLock l(&mu_);
  before_push_[sequence] = std::move(meanwhile);
}

void FaultyWire::RefuseCalls(const std::string& method, absl::Status status) {
  absl::MutexLock l(&mu_);
  refused_calls_[absl::StrCat("/pstrain.ParameterServer/", method)] = std::move(status);
}

void FaultyWire::ClearFaults() {
  absl::MutexLock l(&mu_);
  refused_calls_.clear();
  drop_answers_.clear();
  refused_.clear();
  before_push_.clear();
  delay_ = absl::ZeroDuration();
}

void FaultyWire::DelayAnswers(absl::Duration delay) {
  absl::MutexLock l(&mu_);
  delay_ = delay;
}

std::vector<WirePush> FaultyWire::pushes() const {
  absl::MutexLock l(&mu_);
  return pushes_;
}

int FaultyWire::streams_opened() const {
  absl::MutexLock l(&mu_);
  return streams_opened_;
}

int FaultyWire::pulls() const {
  absl::MutexLock l(&mu_);
  return pulls_;
}

int64_t FaultyWire::largest_request_bytes() const {
  absl::MutexLock l(&mu_);
  return largest_request_bytes_;
}

FaultyWire::Verdict FaultyWire::OnRequest(const PushPullRequest& request, int64_t bytes,
                                          std::set<uint64_t>& refused_tags) {
  absl::MutexLock l(&mu_);
  largest_request_bytes_ = std::max(largest_request_bytes_, bytes);
  if (request.has_pull()) {
    ++pulls_;
    highest_pulled_version_ = std::max(highest_pulled_version_, request.pull().min_version());
  }
  if (!request.has_push()) return {};
  const PushRequest& push = request.push();
  const PushKey key{push.id().worker(), push.id().incarnation(), push.id().sequence()};
  auto open = open_.find(key);
  if (open == open_.end()) {
    WirePush& attempt = pushes_.emplace_back();
    attempt.id = push.id();
    attempt.num_parts = std::max(1, push.num_parts());
    attempt.base_version = push.base_version();
    open = open_.emplace(key, pushes_.size() - 1).first;
    unanswered_[key] = pushes_.size() - 1;
  }
  WirePush& attempt = pushes_[open->second];
  ++attempt.messages;
  if (push.end_of_push()) ++attempt.parts_ended;
  if (push.examples() != 0) attempt.examples = push.examples();
  if (push.has_origin()) attempt.origin = push.origin();

  Verdict verdict;
  if (auto hook = before_push_.find(push.id().sequence()); hook != before_push_.end()) {
    verdict.meanwhile = std::move(hook->second);
    before_push_.erase(hook);
  }
  auto refusal = refused_.find(push.id().sequence());
  if (refusal != refused_.end()) {
    verdict.forward = false;
    if (refused_tags.insert(request.tag()).second) {
      PushPullResponse& answer = verdict.answer.emplace();
      answer.set_tag(request.tag());
      PushResult& result = *answer.mutable_push();
      *result.mutable_id() = push.id();
      result.set_outcome(PUSH_OUTCOME_REJECTED);
      *result.mutable_status() = ToStatusProto(refusal->second);
      if (attempt.answer.outcome() == PUSH_OUTCOME_UNSPECIFIED) attempt.answer = result;
      unanswered_.erase(key);
    }
    if (push.end_of_push()) refused_tags.erase(request.tag());
  }
  if (attempt.parts_ended >= attempt.num_parts &&
      attempt.answer.outcome() != PUSH_OUTCOME_UNSPECIFIED) {
    open_.erase(open);
  }
  return verdict;
}

bool FaultyWire::OnAnswer(const PushPullResponse& answer) {
  if (!answer.has_push() || answer.push().outcome() == PUSH_OUTCOME_PART_RECEIVED) return false;
  const PushResult& result = answer.push();
  absl::MutexLock l(&mu_);
  const PushKey key{result.id().worker(), result.id().incarnation(), result.id().sequence()};
  auto open = open_.find(key);
  if (open == open_.end()) return false;
  WirePush& attempt = pushes_[open->second];
  if (attempt.answer.outcome() != PUSH_OUTCOME_UNSPECIFIED) return false;
  attempt.answer = result;
  auto drop = drop_answers_.find(result.id().sequence());
  if (drop != drop_answers_.end()) {
    attempt.answer_dropped = true;
    unanswered_.erase(key);
    if (--drop->second == 0) drop_answers_.erase(drop);
  }
  if (attempt.parts_ended >= attempt.num_parts) open_.erase(open);
  return attempt.answer_dropped;
}

void FaultyWire::OnAnswerPassed(const PushPullResponse& answer) {
  if (!answer.has_push() || answer.push().outcome() == PUSH_OUTCOME_PART_RECEIVED) return;
  const PushId& id = answer.push().id();
  absl::MutexLock l(&mu_);
  auto unanswered = unanswered_.find(PushKey{id.worker(), id.incarnation(), id.sequence()});
  if (unanswered == unanswered_.end()) return;
  WirePush& attempt = pushes_[unanswered->second];
  attempt.round_pulled_before_answer = highest_pulled_version_ > attempt.base_version;
  unanswered_.erase(unanswered);
}

std::optional<absl::Status> FaultyWire::CallRefusal(const std::string& method) const {
  absl::MutexLock l(&mu_);
  auto refusal = refused_calls_.find(method);
  if (refusal == refused_calls_.end()) return std::nullopt;
  return refusal->second;
}

absl::Duration FaultyWire::answer_delay() const {
  absl::MutexLock l(&mu_);
  return delay_;
}

void FaultyWire::CallStarted(bool push_pull) {
  absl::MutexLock l(&mu_);
  ++calls_in_flight_;
  if (push_pull) ++streams_opened_;
}

void FaultyWire::CallEnded() {
  absl::MutexLock l(&mu_);
  --calls_in_flight_;
}

}  // namespace pstrain
