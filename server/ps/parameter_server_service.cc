#include "server/ps/parameter_server_service.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"
#include "server/ps/lane_session.h"
#include "server/ps/pull_answer_wire.h"
#include "server/ps/pull_reader.h"
#include "server/ps/push_pull_session.h"

namespace pstrain {
namespace {

PushPullSessionOptions SessionOptions(const ParameterServerServiceOptions& options) {
  PushPullSessionOptions session;
  session.chunk_bytes = options.chunk_bytes;
  session.max_queued_bytes = options.max_queued_bytes_per_stream;
  session.max_wait = options.max_wait;
  return session;
}

}  // namespace

// One PushPull stream: a PushPullSession on gRPC's callbacks. Reads are
// processed one at a time (the session asks for the next once a message
// has been handled); answers are written one at a time, a pull's values
// in slices read straight from the shard. No lock is held while calling
// into gRPC.
class PushPullReactor : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
                        private SessionWire {
 public:
  explicit PushPullReactor(ParameterServerService& service)
      : session_(service.store_, service.lanes_, SessionOptions(service.options_), *this) {
    session_.Start();
  }

  void OnReadDone(bool ok) override {
    // Not ok: the client is done sending (or gone).
    if (!ok) return session_.OnReadsDone();
    const grpc::Status parsed =
        grpc::SerializationTraits<PushPullRequest>::Deserialize(&request_bytes_, &request_);
    session_.OnRequest(request_, FromGrpcStatus(parsed));
  }
  void OnWriteDone(bool ok) override { session_.OnWriteDone(ok); }
  void OnCancel() override { session_.Cancel(); }
  void OnDone() override { delete this; }

 private:
  // SessionWire.
  void ReadNext() override { StartRead(&request_bytes_); }
  Written Write(const PushPullResponse& answer, PulledSlices slices) override {
    // Serialised into the buffer of the previous answer (written by now):
    // gRPC serialises only into an empty one.
    answer_bytes_.Clear();
    if (answer.has_pull() && !slices.empty()) {
      answer_bytes_ = PullAnswerBytes(answer.tag(), answer.pull(), std::move(slices));
    } else {
      bool own_buffer;
      const grpc::Status s = grpc::SerializationTraits<PushPullResponse>::Serialize(
          answer, &answer_bytes_, &own_buffer);
      CHECK(s.ok()) << "cannot serialise a PushPullResponse: " << s.error_message();
    }
    StartWrite(&answer_bytes_);
    return Written::kPending;
  }
  bool TakesSlices() const override { return true; }
  void End() override { Finish(grpc::Status::OK); }

  // Used by the reading side only (one OnReadDone at a time).
  grpc::ByteBuffer request_bytes_;
  PushPullRequest request_;
  // The answer being written.
  grpc::ByteBuffer answer_bytes_;
  PushPullSession session_;
};

// A unary Pull that may wait for a version. Finish is called exactly once:
// at once on a refused request, else from the VersionGate callback (which
// runs exactly once: with the version, DeadlineExceeded, or Cancelled).
class PullReactor : public grpc::ServerUnaryReactor {
 public:
  PullReactor(ParameterServerService& service, const PullRequest& request, PullResponse* response) {
    ShardStore& store = service.store_;
    const absl::Time start = store.clock().Now();
    absl::StatusOr<std::shared_ptr<ParameterShard>> shard =
        store.GetJob(request.job_id(), request.generation());
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
        request.min_version(), PullDeadline(clock->Now(), request, service.options_.max_wait),
        [this, wait, request, response, start, metrics, clock,
         max_bytes](absl::StatusOr<int64_t> version) {
          if (!version.ok()) return Finish(ToGrpcStatus(version.status()));
          absl::StatusOr<std::vector<PullResponse>> answer =
              ReadPull(wait->shard, request, max_bytes);
          if (!answer.ok()) return Finish(ToGrpcStatus(answer.status()));
          response->Swap(&answer->front());
          metrics->RecordPull(InlineValueBytes(*response), clock->Now() - start);
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

// One Replicate stream: read a request, apply it on the replication
// thread, answer, read the next. One operation at a time, so Finish is
// called once: when the primary is done sending, or after a refusal.
class ReplicateReactor : public grpc::ServerBidiReactor<ReplicateRequest, ReplicateResponse> {
 public:
  explicit ReplicateReactor(ParameterServerService& service) : service_(service) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::OK);
    service_.replication_.Schedule([this] {
      absl::StatusOr<ReplicaProgress> applied = service_.store_.Replicate(request_);
      answer_.Clear();
      if (applied.ok()) {
        answer_.set_applied_through(applied->applied_through);
        answer_.set_holds_state(applied->holds_state);
      } else {
        *answer_.mutable_error() = ToStatusProto(applied.status());
        refused_ = true;
      }
      StartWrite(&answer_);
    });
  }
  void OnWriteDone(bool ok) override {
    if (!ok || refused_) return Finish(grpc::Status::OK);
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  ParameterServerService& service_;
  // Used by one operation at a time.
  ReplicateRequest request_;
  ReplicateResponse answer_;
  bool refused_ = false;
};

ParameterServerService::ParameterServerService(ShardStore& store,
                                               ParameterServerServiceOptions options,
                                               LaneRegistry* lanes)
    : store_(store), options_(options), lanes_(lanes) {
  if (lanes_ != nullptr) lanes_->ServeWith(this);
}

ParameterServerService::~ParameterServerService() {
  if (lanes_ != nullptr) lanes_->ServeWith(nullptr);
}

absl::StatusOr<std::unique_ptr<LaneServer::Connection>> ParameterServerService::Serve(
    UniqueFd socket, std::function<void()> ended) {
  absl::StatusOr<std::unique_ptr<LaneSession>> session =
      LaneSession::Start(std::move(socket), store_, lanes_, SessionOptions(options_),
                         options_.max_lane_request_bytes, std::move(ended));
  if (!session.ok()) return session.status();
  return std::unique_ptr<LaneServer::Connection>(*std::move(session));
}

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

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ParameterServerService::PushPull(
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

grpc::ServerUnaryReactor* ParameterServerService::ReadPushLedger(
    grpc::CallbackServerContext* context, const ReadPushLedgerRequest* request,
    PushLedger* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<PushLedger> ledger = store_.ReadPushLedger(*request);
  if (ledger.ok()) *response = *std::move(ledger);
  reactor->Finish(ToGrpcStatus(ledger.status()));
  return reactor;
}

grpc::ServerUnaryReactor* ParameterServerService::CommitRound(grpc::CallbackServerContext* context,
                                                              const CommitRoundRequest* request,
                                                              CommitRoundResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  slow_calls_.Schedule([this, request, response, reactor] {
    absl::StatusOr<CommitRoundResponse> r = store_.CommitRound(*request);
    if (r.ok()) *response = *std::move(r);
    reactor->Finish(ToGrpcStatus(r.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ParameterServerService::OpenLane(grpc::CallbackServerContext* context,
                                                           const OpenLaneRequest* request,
                                                           OpenLaneResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (lanes_ == nullptr) {
    reactor->Finish(ToGrpcStatus(absl::FailedPreconditionError(
        "shared-memory lanes are off on this shard (--shm=false, or its socket could not "
        "be opened)")));
    return reactor;
  }
  absl::StatusOr<OpenLaneResponse> granted = lanes_->Grant(*request);
  if (granted.ok()) *response = *std::move(granted);
  reactor->Finish(ToGrpcStatus(granted.status()));
  return reactor;
}

grpc::ServerBidiReactor<ReplicateRequest, ReplicateResponse>* ParameterServerService::Replicate(
    grpc::CallbackServerContext* /*context*/) {
  return new ReplicateReactor(*this);
}

grpc::ServerUnaryReactor* ParameterServerService::ChangeReplica(
    grpc::CallbackServerContext* context, const ChangeReplicaRequest* request,
    ChangeReplicaResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  // A rebuild's cut waits for a sync round to end, within the caller's
  // deadline and never for long.
  const absl::Time deadline =
      std::min(absl::FromChrono(context->deadline()), absl::Now() + absl::Minutes(1));
  slow_calls_.Schedule([this, request, response, reactor, deadline] {
    absl::StatusOr<ChangeReplicaResponse> r = store_.ChangeReplica(*request, deadline);
    if (r.ok()) *response = *std::move(r);
    reactor->Finish(ToGrpcStatus(r.status()));
  });
  return reactor;
}

}  // namespace pstrain
