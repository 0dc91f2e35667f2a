#include "worker/internal/shard_lane.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/net/host_identity.h"
#include "common/net/lane_region.h"
#include "common/net/unix_socket.h"
#include "common/status/grpc_status.h"
#include "grpcpp/support/client_callback.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

// Regions start on cache lines, so two exchanges never share one.
constexpr int64_t kAlignment = 64;
// The grant, the socket and the shard's reply are local: a shard that
// takes longer is not worth waiting for.
constexpr absl::Duration kOpenTimeout = absl::Seconds(5);
constexpr int64_t kMaxReplyBytes = 4096;

int64_t Aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

SegmentRegion::~SegmentRegion() { lane_->Free(where_.offset()); }

const char* SegmentRegion::Find(const SharedBytes& at) const {
  if (!RegionHolds(where_, at)) return nullptr;
  return lane_->segment_->data() + at.offset();
}

// One OpenLane call and the handshake after it: a reactor that deletes
// itself in OnDone, the last thing gRPC does with the call (its context
// must outlive the call, which no callback that owns it can promise), and
// only then says how the opening went. Until it has said so its caller
// holds the channel, so no channel is released from inside one of its own
// callbacks.
class LaneOpening final : public grpc::ClientUnaryReactor {
 public:
  // Lets a canceller reach the context while the call is in flight.
  struct Handle {
    absl::Mutex mu;
    grpc::ClientContext* context ABSL_GUARDED_BY(mu) = nullptr;
  };

  LaneOpening(std::shared_ptr<grpc::Channel> channel, std::string host, int64_t segment_bytes,
              ShardLane::Opened opened, std::shared_ptr<Handle> handle)
      : stub_(ParameterServer::NewStub(std::move(channel))),
        segment_bytes_(segment_bytes),
        opened_(std::move(opened)),
        handle_(std::move(handle)) {
    request_.set_host(std::move(host));
    context_.set_deadline(absl::ToChronoTime(absl::Now() + kOpenTimeout));
    absl::MutexLock l(&handle_->mu);
    handle_->context = &context_;
  }

  void Start() {
    stub_->async()->OpenLane(&context_, &request_, &response_, this);
    StartCall();
  }

  void OnDone(const grpc::Status& status) override {
    {
      absl::MutexLock l(&handle_->mu);
      handle_->context = nullptr;
    }
    // The handshake is local: it waits at most kOpenTimeout, and only for a
    // shard that stopped answering.
    absl::StatusOr<std::shared_ptr<ShardLane>> lane =
        status.ok() ? ShardLane::Connect(response_, segment_bytes_) : FromGrpcStatus(status);
    ShardLane::Opened opened = std::move(opened_);
    // The call's context and stub go first, while the caller still holds
    // the channel; `opened` may let it go.
    delete this;
    opened(std::move(lane));
  }

 private:
  const std::unique_ptr<ParameterServer::Stub> stub_;
  const int64_t segment_bytes_;
  ShardLane::Opened opened_;
  const std::shared_ptr<Handle> handle_;
  grpc::ClientContext context_;
  OpenLaneRequest request_;
  OpenLaneResponse response_;
};

std::function<void()> ShardLane::OpenAsync(std::shared_ptr<grpc::Channel> channel,
                                           int64_t segment_bytes, Opened opened) {
  absl::StatusOr<std::string> host = LocalHostIdentity();
  if (!host.ok()) {
    opened(absl::FailedPreconditionError(
        absl::StrCat("this host's identity cannot be read: ", host.status().message())));
    return [] {};
  }
  auto handle = std::make_shared<LaneOpening::Handle>();
  (new LaneOpening(std::move(channel), *std::move(host), segment_bytes, std::move(opened), handle))
      ->Start();
  return [handle] {
    absl::MutexLock l(&handle->mu);
    if (handle->context != nullptr) handle->context->TryCancel();
  };
}

absl::StatusOr<std::shared_ptr<ShardLane>> ShardLane::Connect(const OpenLaneResponse& grant,
                                                              int64_t segment_bytes) {
  absl::StatusOr<std::unique_ptr<SharedSegment>> segment =
      SharedSegment::Create(segment_bytes, "pstrain-lane");
  if (!segment.ok()) return segment.status();
  absl::StatusOr<UniqueFd> socket = ConnectToAbstractSocket(grant.socket());
  if (!socket.ok()) return socket.status();
  if (absl::Status s = SendFrame(socket->get(), grant.grant(), (*segment)->fd()); !s.ok()) {
    return s;
  }
  absl::StatusOr<ReceivedFrame> reply =
      ReceiveFrame(socket->get(), kMaxReplyBytes, absl::Now() + kOpenTimeout);
  if (!reply.ok()) return reply.status();
  if (!reply->bytes.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the shard refused the lane's segment: ", reply->bytes));
  }
  return std::shared_ptr<ShardLane>(
      new ShardLane(grant.grant(), *std::move(segment), *std::move(socket)));
}

ShardLane::ShardLane(std::string id, std::unique_ptr<SharedSegment> segment, UniqueFd socket)
    : id_(std::move(id)), segment_(std::move(segment)), socket_(std::move(socket)) {}

int64_t ShardLane::Allocate(int64_t bytes) {
  bytes = Aligned(bytes);
  absl::MutexLock l(&mu_);
  // First fit: exchanges are few (a pull and a push per lane in flight).
  int64_t at = 0;
  for (const auto& [offset, size] : used_) {
    if (offset - at >= bytes) break;
    at = offset + size;
  }
  if (at > segment_->size() || segment_->size() - at < bytes) return -1;
  used_[at] = bytes;
  return at;
}

void ShardLane::Free(int64_t offset) {
  absl::MutexLock l(&mu_);
  used_.erase(offset);
}

int64_t ShardLane::used_bytes() const {
  absl::MutexLock l(&mu_);
  int64_t total = 0;
  for (const auto& [offset, size] : used_) total += size;
  return total;
}

UniqueFd ShardLane::TakeSocket() {
  absl::MutexLock l(&mu_);
  return std::move(socket_);
}

std::shared_ptr<SegmentRegion> ShardLane::Place(const std::vector<OutgoingRequest>& requests,
                                                int64_t answer_bytes,
                                                std::vector<OutgoingRequest>* placed) {
  int64_t bytes = answer_bytes;
  for (const OutgoingRequest& request : requests) {
    for (const absl::Span<const char>& data : request.dense_data) {
      bytes += static_cast<int64_t>(Aligned(data.size()));
    }
    if (!request.message.has_push()) continue;
    for (const NamedTensor& gradient : request.message.push().gradients()) {
      if (gradient.has_rows()) bytes += Aligned(gradient.rows().values().size());
    }
  }
  if (bytes == 0) return nullptr;
  const int64_t offset = Allocate(bytes);
  if (offset < 0) return nullptr;
  LaneRegion where;
  where.set_lane(id_);
  where.set_offset(offset);
  where.set_size(Aligned(bytes));
  std::shared_ptr<SegmentRegion> region(new SegmentRegion(shared_from_this(), where));
  int64_t at = offset;
  // Copies `data` to the region and says where it went.
  auto put = [this, &at](absl::string_view data, SharedBytes* shared) {
    std::memcpy(segment_->data() + at, data.data(), data.size());
    shared->set_offset(at);
    shared->set_size(static_cast<int64_t>(data.size()));
    at += Aligned(data.size());
  };
  placed->clear();
  placed->reserve(requests.size());
  for (const OutgoingRequest& request : requests) {
    OutgoingRequest& copy = placed->emplace_back();
    // Rows' values go straight to the segment, not through the copy.
    copy.message.set_tag(request.message.tag());
    *copy.message.mutable_lane() = where;
    copy.answer_bytes = request.answer_bytes;
    if (!request.message.has_push()) {
      *copy.message.mutable_pull() = request.message.pull();
      continue;
    }
    const PushRequest& push = request.message.push();
    PushRequest* to = copy.message.mutable_push();
    for (int i = 0; i < push.gradients_size(); ++i) {
      const NamedTensor& gradient = push.gradients(i);
      NamedTensor* into = to->add_gradients();
      into->set_name(gradient.name());
      if (gradient.has_rows()) {
        SparseRows* rows = into->mutable_rows();
        rows->set_dtype(gradient.rows().dtype());
        rows->set_row_width(gradient.rows().row_width());
        *rows->mutable_ids() = gradient.rows().ids();
        put(gradient.rows().values(), rows->mutable_shared());
        continue;
      }
      *into->mutable_dense() = gradient.dense();
      const size_t d = static_cast<size_t>(i);
      if (d < request.dense_data.size() && !request.dense_data[d].empty()) {
        const absl::Span<const char> data = request.dense_data[d];
        put(absl::string_view(data.data(), data.size()), into->mutable_dense()->mutable_shared());
      }
    }
    // Every other field of the push, as it was.
    PushRequest rest = push;
    rest.clear_gradients();
    to->MergeFrom(rest);
  }
  return region;
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
