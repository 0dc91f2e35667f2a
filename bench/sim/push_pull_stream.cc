#include "bench/sim/push_pull_stream.h"

#include <utility>

#include "common/status/grpc_status.h"

namespace pstrain {
namespace bench {

// The reactor keeps itself alive (self_) until gRPC calls OnDone; a hold
// keeps OnDone away until Close, so that a Start* call never races the
// stream's end.
class PushPullStream::Reactor final
    : public grpc::ClientBidiReactor<PushPullRequest, PushPullResponse> {
 public:
  void Start(ParameterServer::Stub& stub, std::shared_ptr<Reactor> self) {
    self_ = std::move(self);
    stub.async()->PushPull(&context_, this);
    AddHold();
    StartCall();
  }

  void Exchange(std::vector<PushPullRequest> messages, Done done) {
    bool taken = false;
    {
      absl::MutexLock lock(&mu_);
      if (!closed_ && !broken_) {
        outgoing_ = std::move(messages);
        next_ = 0;
        answers_.clear();
        done_ = std::move(done);
        taken = true;
      }
    }
    if (!taken) {
      done(absl::UnavailableError("the PushPull stream is closed"), {});
      return;
    }
    StartWrite(&outgoing_[0]);
  }

  void Close() {
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return;
      closed_ = true;
    }
    context_.TryCancel();
    RemoveHold();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return Fail("the shard closed the PushPull stream");
    if (++next_ < outgoing_.size()) {
      StartWrite(&outgoing_[next_]);
    } else {
      StartRead(&incoming_);
    }
  }

  void OnReadDone(bool ok) override {
    if (!ok) return Fail("the PushPull stream ended");
    if (incoming_.has_error()) {
      return Finish(FromStatusProto(incoming_.error()));
    }
    const bool complete = !incoming_.has_pull() || incoming_.pull().end_of_pull();
    answers_.push_back(std::move(incoming_));
    incoming_.Clear();
    if (complete) return Finish(absl::OkStatus());
    StartRead(&incoming_);
  }

  void OnDone(const grpc::Status& /*status*/) override {
    Fail("the PushPull stream ended");
    self_.reset();  // may delete this
  }

 private:
  void Fail(const std::string& why) {
    {
      absl::MutexLock lock(&mu_);
      broken_ = true;
    }
    Finish(absl::UnavailableError(why));
  }

  void Finish(absl::Status status) {
    Done done;
    {
      absl::MutexLock lock(&mu_);
      done = std::move(done_);
      done_ = nullptr;
    }
    std::vector<PushPullResponse> answers = std::move(answers_);
    answers_.clear();
    if (done) done(std::move(status), std::move(answers));
  }

  grpc::ClientContext context_;
  std::shared_ptr<Reactor> self_;

  // The exchange in flight: set by Exchange before its first write, then
  // touched by one gRPC reaction at a time.
  std::vector<PushPullRequest> outgoing_;
  size_t next_ = 0;
  PushPullResponse incoming_;
  std::vector<PushPullResponse> answers_;

  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  Done done_ ABSL_GUARDED_BY(mu_);
};

std::shared_ptr<PushPullStream> PushPullStream::Open(ParameterServer::Stub& stub) {
  auto reactor = std::make_shared<Reactor>();
  reactor->Start(stub, reactor);
  return std::shared_ptr<PushPullStream>(new PushPullStream(std::move(reactor)));
}

PushPullStream::~PushPullStream() { Close(); }

void PushPullStream::Exchange(std::vector<PushPullRequest> messages, Done done) {
  if (messages.empty()) {
    done(absl::InvalidArgumentError("an exchange needs a message"), {});
    return;
  }
  reactor_->Exchange(std::move(messages), std::move(done));
}

void PushPullStream::Close() { reactor_->Close(); }

}  // namespace bench
}  // namespace pstrain
