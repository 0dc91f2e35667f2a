#include "server/ps/parameter_server_service.h"

#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status/grpc_status.h"
#include "server/ps/pull_reader.h"

namespace pstrain {
namespace {

absl::Time PullDeadline(Clock& clock, const PullRequest& pull, absl::Duration max_wait) {
  return clock.Now() + std::min(absl::Milliseconds(pull.wait_ms()), max_wait);
}

int64_t ValueBytes(const PullResponse& r) {
  int64_t n = 0;
  for (const NamedTensor& t : r.values()) {
    n += t.has_dense() ? static_cast<int64_t>(t.dense().data().size())
                       : static_cast<int64_t>(t.rows().values().size());
  }
  return n;
}

}  // namespace

// One PushPull stream. Reads are processed one at a time (the next read
// starts when a message has been handled, so a shard busy applying reads no
// further: flow control); answers are queued and written one at a time.
// Pulls that wait for a version complete from the VersionGate's callback.
// No lock is held while calling into gRPC.
class PushPullReactor : public grpc::ServerBidiReactor<PushPullRequest, PushPullResponse> {
 public:
  explicit PushPullReactor(ParameterServerService& service) : service_(service) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The client is done sending (or gone): unfinished parts fail.
      parts_.clear();
      Decide(&PushPullReactor::SetReadsDone);
      return;
    }
    const uint64_t tag = request_.tag();
    if (request_.has_push()) {
      HandlePush(tag, request_.push());
    } else if (request_.has_pull()) {
      HandlePull(tag, request_.pull());
    } else {
      SendError(tag, absl::InvalidArgumentError("a PushPullRequest with neither push nor pull"));
    }
    bool read_now = false;
    {
      absl::MutexLock l(&mu_);
      if (queued_bytes_ > service_.options_.max_queued_bytes_per_stream) {
        read_paused_ = true;
      } else {
        read_now = true;
      }
    }
    if (read_now) StartRead(&request_);
  }

  void OnWriteDone(bool ok) override {
    const PushPullResponse* next = nullptr;
    bool resume_read = false, finish = false;
    {
      absl::MutexLock l(&mu_);
      queued_bytes_ -= front_bytes_.front();
      front_bytes_.pop_front();
      queue_.pop_front();
      if (!ok) {
        write_failed_ = true;
        queue_.clear();
        front_bytes_.clear();
        queued_bytes_ = 0;
      }
      if (!queue_.empty()) {
        next = &queue_.front();
      } else {
        writing_ = false;
      }
      if (read_paused_ && queued_bytes_ <= service_.options_.max_queued_bytes_per_stream / 2) {
        read_paused_ = false;
        resume_read = true;
      }
      finish = ShouldFinish();
    }
    if (next != nullptr) StartWrite(next);
    if (resume_read) StartRead(&request_);
    if (finish) Finish(grpc::Status::OK);
  }

  void OnCancel() override {
    std::vector<std::pair<std::shared_ptr<ParameterShard>, uint64_t>> waits;
    {
      absl::MutexLock l(&mu_);
      for (const auto& [token, wait] : waits_) {
        if (wait.second != 0) waits.push_back(wait);
      }
    }
    for (auto& [shard, id] : waits) shard->version_gate().Cancel(id);
  }

  void OnDone() override { delete this; }

 private:
  void HandlePush(uint64_t tag, const PushRequest& push) {
    auto it = parts_.find(tag);
    if (it != parts_.end() && !it->second->Matches(push)) {
      parts_.erase(it);  // the tag now carries another push: the old part fails
      it = parts_.end();
    }
    if (it == parts_.end()) {
      ShardStore& store = service_.store_;
      it = parts_.emplace(tag, store.pushes().StartPart(store.GetJob(push.job_id()), push)).first;
    }
    PushPart::Step step = it->second->Add(push);
    if (step.finished) parts_.erase(it);
    if (step.reply.has_value()) {
      std::vector<PushPullResponse> out(1);
      out[0].set_tag(tag);
      *out[0].mutable_push() = std::move(*step.reply);
      Enqueue(std::move(out));
    }
  }

  void HandlePull(uint64_t tag, const PullRequest& pull) {
    ShardStore& store = service_.store_;
    absl::StatusOr<std::shared_ptr<ParameterShard>> shard = store.GetJob(pull.job_id());
    if (!shard.ok()) return SendError(tag, shard.status());
    if (absl::Status s = ValidatePull(**shard, pull).status(); !s.ok()) return SendError(tag, s);
    const absl::Time start = store.clock().Now();
    if (pull.min_version() <= (*shard)->version()) {
      return AnswerPull(tag, **shard, pull, (*shard)->version(), start);
    }
    uint64_t token;
    {
      absl::MutexLock l(&mu_);
      token = next_token_++;
      waits_[token] = {*shard, 0};
    }
    std::shared_ptr<ParameterShard> held = *shard;
    const uint64_t id = held->version_gate().WhenAtLeast(
        pull.min_version(), PullDeadline(store.clock(), pull, service_.options_.max_wait),
        [this, tag, token, held, pull, start](absl::StatusOr<int64_t> version) {
          if (version.ok()) {
            AnswerPull(tag, *held, pull, *version, start);
          } else {
            SendError(tag, version.status());
          }
          Decide([token](PushPullReactor* r)
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu_) { r->waits_.erase(token); });
        });
    absl::MutexLock l(&mu_);
    auto it = waits_.find(token);
    if (it != waits_.end()) it->second.second = id;
  }

  void AnswerPull(uint64_t tag, const ParameterShard& shard, const PullRequest& pull,
                  int64_t version, absl::Time start) {
    absl::StatusOr<std::vector<PullResponse>> answer =
        ReadPull(shard, pull, version, service_.options_.chunk_bytes);
    if (!answer.ok()) return SendError(tag, answer.status());
    std::vector<PushPullResponse> out(answer->size());
    int64_t bytes = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      bytes += ValueBytes((*answer)[i]);
      out[i].set_tag(tag);
      out[i].mutable_pull()->Swap(&(*answer)[i]);
    }
    service_.store_.metrics().RecordPull(bytes, service_.store_.clock().Now() - start);
    Enqueue(std::move(out));
  }

  void SendError(uint64_t tag, const absl::Status& status) {
    std::vector<PushPullResponse> out(1);
    out[0].set_tag(tag);
    *out[0].mutable_error() = ToStatusProto(status);
    Enqueue(std::move(out));
  }

  // Thread-safe: queues answers and starts writing if no write is in flight.
  void Enqueue(std::vector<PushPullResponse> responses) {
    const PushPullResponse* first = nullptr;
    {
      absl::MutexLock l(&mu_);
      if (write_failed_) return;
      for (PushPullResponse& r : responses) {
        const int64_t bytes = static_cast<int64_t>(r.ByteSizeLong());
        queue_.push_back(std::move(r));
        front_bytes_.push_back(bytes);
        queued_bytes_ += bytes;
      }
      if (!writing_ && !queue_.empty()) {
        writing_ = true;
        first = &queue_.front();
      }
    }
    if (first != nullptr) StartWrite(first);
  }

  // Changes state under the lock, then finishes the call if nothing is left.
  template <typename Fn>
  void Decide(Fn change) {
    bool finish;
    {
      absl::MutexLock l(&mu_);
      change(this);
      finish = ShouldFinish();
    }
    if (finish) Finish(grpc::Status::OK);
  }
  static void SetReadsDone(PushPullReactor* r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(r->mu_) {
    r->reads_done_ = true;
  }

  bool ShouldFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || !reads_done_ || writing_ || !waits_.empty()) return false;
    finished_ = true;
    return true;
  }

  ParameterServerService& service_;

  // Used by the reading side only (one OnReadDone at a time).
  PushPullRequest request_;
  std::map<uint64_t, std::unique_ptr<PushPart>> parts_;

  absl::Mutex mu_;
  std::deque<PushPullResponse> queue_ ABSL_GUARDED_BY(mu_);
  std::deque<int64_t> front_bytes_ ABSL_GUARDED_BY(mu_);
  int64_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool read_paused_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Pulls waiting for a version: token -> (shard, gate waiter id; 0 until
  // known).
  std::map<uint64_t, std::pair<std::shared_ptr<ParameterShard>, uint64_t>> waits_
      ABSL_GUARDED_BY(mu_);
  uint64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
};

// A unary Pull that may wait for a version. Finish is called exactly once:
// at once on a refused request, else from the VersionGate callback (which
// runs exactly once: with the version, DeadlineExceeded, or Cancelled).
class PullReactor : public grpc::ServerUnaryReactor {
 public:
  PullReactor(ParameterServerService& service, const PullRequest& request, PullResponse* response) {
    ShardStore& store = service.store_;
    const absl::Time start = store.clock().Now();
    absl::StatusOr<std::shared_ptr<ParameterShard>> shard = store.GetJob(request.job_id());
    if (!shard.ok()) {
      Finish(ToGrpcStatus(shard.status()));
      return;
    }
    absl::StatusOr<int64_t> bytes = ValidatePull(**shard, request);
    if (bytes.ok() && *bytes > service.options_.max_unary_pull_bytes) {
      bytes = absl::ResourceExhaustedError(
          absl::StrCat("the pull answer would hold ", *bytes, " bytes; unary Pull answers at most ",
                       service.options_.max_unary_pull_bytes, "; read large values over PushPull"));
    }
    if (!bytes.ok()) {
      Finish(ToGrpcStatus(bytes.status()));
      return;
    }
    // The callback may finish the call, and OnDone delete this reactor,
    // before WhenAtLeast returns: everything used after it is held here.
    std::shared_ptr<WaitState> wait = wait_;
    wait->shard = *shard;
    ShardMetrics* metrics = &store.metrics();
    Clock* clock = &store.clock();
    const int64_t max_bytes = service.options_.max_unary_pull_bytes;
    const uint64_t id = wait->shard->version_gate().WhenAtLeast(
        request.min_version(), PullDeadline(*clock, request, service.options_.max_wait),
        [this, wait, request, response, start, metrics, clock,
         max_bytes](absl::StatusOr<int64_t> version) {
          if (!version.ok()) return Finish(ToGrpcStatus(version.status()));
          absl::StatusOr<std::vector<PullResponse>> answer =
              ReadPull(*wait->shard, request, *version, max_bytes);
          if (!answer.ok()) return Finish(ToGrpcStatus(answer.status()));
          response->Swap(&answer->front());
          metrics->RecordPull(ValueBytes(*response), clock->Now() - start);
          Finish(grpc::Status::OK);
        });
    absl::MutexLock l(&wait->mu);
    wait->id = id;
  }

  void OnCancel() override {
    uint64_t id;
    {
      absl::MutexLock l(&wait_->mu);
      id = wait_->id;
    }
    if (id != 0) wait_->shard->version_gate().Cancel(id);
  }

  void OnDone() override { delete this; }

 private:
  struct WaitState {
    std::shared_ptr<ParameterShard> shard;  // set before the wait starts
    absl::Mutex mu;
    uint64_t id ABSL_GUARDED_BY(mu) = 0;
  };
  const std::shared_ptr<WaitState> wait_ = std::make_shared<WaitState>();
};

ParameterServerService::ParameterServerService(ShardStore& store,
                                               ParameterServerServiceOptions options)
    : store_(store), options_(options) {}

ParameterServerService::~ParameterServerService() = default;

grpc::ServerUnaryReactor* ParameterServerService::CreateVariables(
    grpc::CallbackServerContext* context, const CreateVariablesRequest* request,
    CreateVariablesResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  slow_calls_.Schedule([this, request, response, reactor] {
    absl::StatusOr<CreateVariablesResponse> r = store_.CreateVariables(*request);
    if (r.ok()) *response = *std::move(r);
    reactor->Finish(ToGrpcStatus(r.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ParameterServerService::DropJob(grpc::CallbackServerContext* context,
                                                          const DropJobRequest* request,
                                                          DropJobResponse* /*response*/) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(store_.DropJob(*request)));
  return reactor;
}

grpc::ServerBidiReactor<PushPullRequest, PushPullResponse>* ParameterServerService::PushPull(
    grpc::CallbackServerContext* /*context*/) {
  return new PushPullReactor(*this);
}

grpc::ServerUnaryReactor* ParameterServerService::Pull(grpc::CallbackServerContext* /*context*/,
                                                       const PullRequest* request,
                                                       PullResponse* response) {
  return new PullReactor(*this, *request, response);
}

grpc::ServerUnaryReactor* ParameterServerService::Snapshot(grpc::CallbackServerContext* context,
                                                           const SnapshotRequest* request,
                                                           SnapshotResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  slow_calls_.Schedule([this, request, response, reactor] {
    absl::StatusOr<SnapshotResponse> r = store_.Snapshot(*request);
    if (r.ok()) *response = *std::move(r);
    reactor->Finish(ToGrpcStatus(r.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ParameterServerService::Restore(grpc::CallbackServerContext* context,
                                                          const RestoreRequest* request,
                                                          RestoreResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  slow_calls_.Schedule([this, request, response, reactor] {
    absl::StatusOr<RestoreResponse> r = store_.Restore(*request);
    if (r.ok()) *response = *std::move(r);
    reactor->Finish(ToGrpcStatus(r.status()));
  });
  return reactor;
}

}  // namespace pstrain
