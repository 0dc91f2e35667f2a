#include "server/ps/parameter_server_service.h"

#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/net/lane_region.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"
#include "server/ps/pull_answer_wire.h"
#include "server/ps/pull_reader.h"

namespace pstrain {
namespace {

absl::Time PullDeadline(Clock& clock, const PullRequest& pull, absl::Duration max_wait) {
  return clock.Now() + std::min(absl::Milliseconds(pull.wait_ms()), max_wait);
}

constexpr int64_t kFloatBytes = 4;
// Dense pieces smaller than this stay in the answer's message: a slice of
// their own would cost more than the copy it saves.
constexpr int64_t kMinSliceBytes = 4096;

// Where a pull's dense values go in a lane's segment.
struct LaneTarget {
  std::shared_ptr<const SharedSegment> segment;
  LaneRegion region;
};

// The segment of `request`'s lane, checked to hold its region; with a
// push, each gradient kept in the segment (dense bytes, rows' values) is
// copied into its message (the worker may reuse the region once the push
// is answered, and a push may wait for the rest of its parts or its sync
// round).
absl::StatusOr<LaneTarget> TakeLaneBytes(LaneRegistry* lanes, PushPullRequest& request,
                                         ShardMetrics& metrics) {
  if (lanes == nullptr) {
    return absl::FailedPreconditionError(
        "a request names a shared-memory lane, but this shard has lanes off");
  }
  absl::StatusOr<std::shared_ptr<const SharedSegment>> segment = lanes->Find(request.lane().lane());
  if (!segment.ok()) return segment.status();
  LaneTarget target{*std::move(segment), request.lane()};
  if (!RegionFits(target.region, target.segment->size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("a lane region [", target.region.offset(), ", +", target.region.size(),
                     ") outside its segment of ", target.segment->size(), " bytes"));
  }
  if (!request.has_push()) return target;
  int64_t taken = 0;
  for (NamedTensor& gradient : *request.mutable_push()->mutable_gradients()) {
    const bool dense = gradient.has_dense() && gradient.dense().has_shared();
    const bool rows = gradient.has_rows() && gradient.rows().has_shared();
    if (!dense && !rows) continue;
    const SharedBytes bytes = dense ? gradient.dense().shared() : gradient.rows().shared();
    if (!RegionHolds(target.region, bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the gradient of \"", gradient.name(), "\" lies outside its lane region"));
    }
    const char* data = target.segment->data() + bytes.offset();
    if (dense) {
      gradient.mutable_dense()->set_data(data, bytes.size());
      gradient.mutable_dense()->clear_shared();
    } else {
      gradient.mutable_rows()->set_values(data, bytes.size());
      gradient.mutable_rows()->clear_shared();
    }
    taken += bytes.size();
  }
  metrics.RecordLaneBytes("push", taken);
  return target;
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
// further, and none while too many answers wait to be sent: flow control).
// Answers are queued and written one at a time; a pull's answer is read
// from the shard chunk by chunk as the previous chunk is sent. Pulls that
// wait for a version are queued from the VersionGate's callback. No lock is
// held while calling into gRPC.
class PushPullReactor : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit PushPullReactor(ParameterServerService& service) : service_(service) {
    StartRead(&request_bytes_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The client is done sending (or gone): unfinished parts fail.
      parts_.clear();
      bool finish;
      {
        absl::MutexLock l(&mu_);
        reads_done_ = true;
        finish = ShouldFinish();
      }
      if (finish) Finish(grpc::Status::OK);
      return;
    }
    const grpc::Status parsed =
        grpc::SerializationTraits<PushPullRequest>::Deserialize(&request_bytes_, &request_);
    const uint64_t tag = parsed.ok() ? request_.tag() : 0;
    absl::StatusOr<LaneTarget> lane = LaneTarget{};
    if (parsed.ok() && request_.has_lane()) {
      lane = TakeLaneBytes(service_.lanes_, request_, service_.store_.metrics());
    }
    if (!parsed.ok()) {
      SendError(tag, absl::InvalidArgumentError(absl::StrCat(
                         "a PushPullRequest that does not parse: ", parsed.error_message())));
    } else if (request_.has_push()) {
      HandlePush(tag, *request_.mutable_push(), lane.status());
    } else if (request_.has_pull() && !lane.ok()) {
      SendError(tag, lane.status());
    } else if (request_.has_pull()) {
      HandlePull(tag, request_.pull(), *std::move(lane));
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
    if (read_now) StartRead(&request_bytes_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      absl::MutexLock l(&mu_);
      write_failed_ = true;
    }
    WriteNext();
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
  // An answer waiting to be written: a message, or a pull read chunk by
  // chunk into `message`.
  struct Outgoing {
    PushPullResponse message;
    grpc::ByteBuffer bytes;  // what is being written of it
    std::unique_ptr<PullCursor> cursor;
    // Where the pull's dense values go, when it came through a lane, and
    // how much of the region earlier messages used.
    LaneTarget lane;
    int64_t lane_used = 0;
    uint64_t tag = 0;
    int64_t charge = 0;  // counted in queued_bytes_
    absl::Time start;
    int64_t pulled_bytes = 0;
    bool finished = false;  // written whole (once its last write completes)
  };

  // `lane`: whether the message's lane bytes could be taken; a part with
  // a message whose could not fails.
  void HandlePush(uint64_t tag, PushRequest& push, const absl::Status& lane) {
    auto it = parts_.find(tag);
    if (it != parts_.end() && (!it->second->Matches(push) || !lane.ok())) {
      parts_.erase(it);  // the tag now carries another push: the old part fails
      it = parts_.end();
    }
    if (it == parts_.end()) {
      ShardStore& store = service_.store_;
      absl::StatusOr<std::shared_ptr<ParameterShard>> shard =
          lane.ok() ? store.GetJob(push.job_id(), push.generation()) : lane;
      it = parts_.emplace(tag, store.pushes().StartPart(std::move(shard), push)).first;
    }
    PushPart::Step step = it->second->Add(push);
    if (step.finished) parts_.erase(it);
    if (step.reply.has_value()) {
      Outgoing out;
      out.message.set_tag(tag);
      *out.message.mutable_push() = std::move(*step.reply);
      Enqueue(std::move(out));
    }
  }

  // `lane.segment` set: the pull's dense values go to `lane.region`.
  void HandlePull(uint64_t tag, const PullRequest& pull, LaneTarget lane) {
    ShardStore& store = service_.store_;
    absl::StatusOr<std::shared_ptr<ParameterShard>> shard =
        store.GetJob(pull.job_id(), pull.generation());
    if (!shard.ok()) return SendError(tag, shard.status());
    if (absl::Status s = ValidatePull(**shard, pull).status(); !s.ok()) return SendError(tag, s);
    const absl::Time start = store.clock().Now();
    if (pull.min_version() <= (*shard)->version()) {
      return QueuePull(tag, *shard, pull, std::move(lane), start);
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
        [this, tag, token, held, pull, lane, start](absl::StatusOr<int64_t> version) {
          if (version.ok()) {
            QueuePull(tag, held, pull, lane, start);
          } else {
            SendError(tag, version.status());
          }
          bool finish;
          {
            absl::MutexLock l(&mu_);
            waits_.erase(token);
            finish = ShouldFinish();
          }
          if (finish) Finish(grpc::Status::OK);
        });
    absl::MutexLock l(&mu_);
    auto it = waits_.find(token);
    if (it != waits_.end()) it->second.second = id;
  }

  void QueuePull(uint64_t tag, std::shared_ptr<ParameterShard> shard, const PullRequest& pull,
                 LaneTarget lane, absl::Time start) {
    Outgoing out;
    int64_t chunk_bytes = service_.options_.chunk_bytes;
    // Through a lane, one message says where every dense value lies; what
    // finds no room in the region travels in the message, up to the
    // region's size. Rows keep their chunks: their ids ride in the message
    // (up to twice their values' bytes, for rows of one float), which must
    // stay under the message limit.
    if (lane.segment != nullptr && pull.rows_size() == 0) {
      chunk_bytes = std::max(chunk_bytes, lane.region.size());
    }
    out.cursor = std::make_unique<PullCursor>(std::move(shard), pull, chunk_bytes);
    out.lane = std::move(lane);
    out.tag = tag;
    out.charge = service_.options_.chunk_bytes;
    out.start = start;
    Enqueue(std::move(out));
  }

  void SendError(uint64_t tag, const absl::Status& status) {
    Outgoing out;
    out.message.set_tag(tag);
    *out.message.mutable_error() = ToStatusProto(status);
    Enqueue(std::move(out));
  }

  // Thread-safe: queues an answer and starts writing if no write is in
  // flight.
  void Enqueue(Outgoing out) {
    if (out.charge == 0) out.charge = static_cast<int64_t>(out.message.ByteSizeLong());
    {
      absl::MutexLock l(&mu_);
      if (write_failed_) return;
      queued_bytes_ += out.charge;
      queue_.push_back(std::move(out));
      if (writing_) return;
      writing_ = true;
    }
    WriteNext();
  }

  // Called by whoever owns the writing side (writing_ set): drops what has
  // been written, then writes the next message or gives up the writing side.
  void WriteNext() {
    Outgoing* front = nullptr;
    bool resume_read = false, finish = false;
    {
      absl::MutexLock l(&mu_);
      while (!queue_.empty() && (queue_.front().finished || write_failed_)) {
        queued_bytes_ -= queue_.front().charge;
        queue_.pop_front();
      }
      if (queue_.empty()) {
        writing_ = false;
      } else {
        front = &queue_.front();  // stays put: others only append
      }
      if (read_paused_ && !reads_done_ &&
          queued_bytes_ <= service_.options_.max_queued_bytes_per_stream / 2) {
        read_paused_ = false;
        resume_read = true;
      }
      finish = ShouldFinish();
    }
    if (resume_read) StartRead(&request_bytes_);
    if (finish) Finish(grpc::Status::OK);
    if (front == nullptr) return;
    if (front->cursor == nullptr) {
      front->finished = true;
      SerializeMessage(front);
    } else {
      // Read the next chunk while the previous one travels, its dense
      // values straight into the slices that will be sent or, through a
      // lane, into its region while that has room.
      PulledSlices slices;
      std::vector<std::pair<int, SharedBytes>> in_lane;
      auto destination = [front, &slices, &in_lane](int value, bool rows, int64_t count) -> float* {
        const int64_t bytes = count * kFloatBytes;
        if (front->lane.segment != nullptr) {
          if (bytes > front->lane.region.size() - front->lane_used) return nullptr;
          SharedBytes& at = in_lane.emplace_back(value, SharedBytes()).second;
          at.set_offset(front->lane.region.offset() + front->lane_used);
          at.set_size(bytes);
          front->lane_used += bytes;
          return reinterpret_cast<float*>(front->lane.segment->data() + at.offset());
        }
        if (rows || bytes < kMinSliceBytes) return nullptr;
        slices.emplace_back(value, NewValueSlice(bytes));
        return reinterpret_cast<float*>(const_cast<uint8_t*>(slices.back().second.begin()));
      };
      front->message.Clear();
      absl::Status s = front->cursor->Next(front->message.mutable_pull(), destination);
      if (s.ok()) {
        PullResponse& pull = *front->message.mutable_pull();
        front->pulled_bytes += ValueBytes(pull);  // what the message itself carries
        for (const auto& [value, slice] : slices) {
          front->pulled_bytes += static_cast<int64_t>(slice.size());
        }
        int64_t lane_bytes = 0;
        for (auto& [value, at] : in_lane) {
          lane_bytes += at.size();
          NamedTensor* t = pull.mutable_values(value);
          *(t->has_rows() ? t->mutable_rows()->mutable_shared()
                          : t->mutable_dense()->mutable_shared()) = std::move(at);
        }
        front->pulled_bytes += lane_bytes;
        if (front->lane.segment == nullptr) {
          front->bytes = PullAnswerBytes(front->tag, pull, std::move(slices));
        } else {
          service_.store_.metrics().RecordLaneBytes("pull", lane_bytes);
          front->message.set_tag(front->tag);
          SerializeMessage(front);
        }
      } else {
        front->message.Clear();
        front->message.set_tag(front->tag);
        *front->message.mutable_error() = ToStatusProto(s);
        SerializeMessage(front);
      }
      front->finished = !s.ok() || front->cursor->done();
      if (front->finished && s.ok()) {
        ShardStore& store = service_.store_;
        store.metrics().RecordPull(front->pulled_bytes, store.clock().Now() - front->start);
      }
    }
    StartWrite(&front->bytes);
  }

  // Into out->bytes, which may still hold the answer's previous chunk
  // (written by now): gRPC serialises only into an empty buffer.
  static void SerializeMessage(Outgoing* out) {
    out->bytes.Clear();
    bool own_buffer;
    const grpc::Status s = grpc::SerializationTraits<PushPullResponse>::Serialize(
        out->message, &out->bytes, &own_buffer);
    CHECK(s.ok()) << "cannot serialise a PushPullResponse: " << s.error_message();
  }

  bool ShouldFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || !reads_done_ || writing_ || !waits_.empty()) return false;
    finished_ = true;
    return true;
  }

  ParameterServerService& service_;

  // Used by the reading side only (one OnReadDone at a time).
  grpc::ByteBuffer request_bytes_;
  PushPullRequest request_;
  std::map<uint64_t, std::unique_ptr<PushPart>> parts_;

  absl::Mutex mu_;
  // The front entry belongs to the writing side while writing_ is set.
  std::deque<Outgoing> queue_ ABSL_GUARDED_BY(mu_);
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
        request.min_version(), PullDeadline(*clock, request, service.options_.max_wait),
        [this, wait, request, response, start, metrics, clock,
         max_bytes](absl::StatusOr<int64_t> version) {
          if (!version.ok()) return Finish(ToGrpcStatus(version.status()));
          absl::StatusOr<std::vector<PullResponse>> answer =
              ReadPull(wait->shard, request, max_bytes);
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
                                               ParameterServerServiceOptions options,
                                               LaneRegistry* lanes)
    : store_(store), options_(options), lanes_(lanes) {}

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

}  // namespace pstrain
