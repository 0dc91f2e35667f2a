#include "worker/internal/shard_lane.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/net/host_identity.h"
#include "common/net/lane_region.h"
#include "common/net/unix_socket.h"
#include "common/status/grpc_status.h"
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

std::function<void()> ShardLane::OpenAsync(std::shared_ptr<grpc::Channel> channel,
                                           int64_t segment_bytes, Opened opened) {
  // Everything the call needs until its callback, which owns it.
  struct Opening {
    std::unique_ptr<ParameterServer::Stub> stub;
    grpc::ClientContext context;
    OpenLaneRequest request;
    OpenLaneResponse response;
  };
  auto opening = std::make_shared<Opening>();
  absl::StatusOr<std::string> host = LocalHostIdentity();
  if (!host.ok()) {
    opened(absl::FailedPreconditionError(
        absl::StrCat("this host's identity cannot be read: ", host.status().message())));
    return [] {};
  }
  opening->request.set_host(*std::move(host));
  opening->stub = ParameterServer::NewStub(std::move(channel));
  opening->context.set_deadline(absl::ToChronoTime(absl::Now() + kOpenTimeout));
  Opening* raw = opening.get();
  raw->stub->async()->OpenLane(
      &raw->context, &raw->request, &raw->response,
      [opening, segment_bytes, opened = std::move(opened)](grpc::Status status) {
        if (!status.ok()) return opened(FromGrpcStatus(status));
        opened(Connect(opening->response, segment_bytes));
      });
  return [opening] { opening->context.TryCancel(); };
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

std::shared_ptr<SegmentRegion> ShardLane::Place(const std::vector<OutgoingRequest>& requests,
                                                int64_t answer_bytes,
                                                std::vector<OutgoingRequest>* placed) {
  int64_t bytes = answer_bytes;
  for (const OutgoingRequest& request : requests) {
    for (const absl::Span<const char>& data : request.dense_data) {
      bytes += static_cast<int64_t>(Aligned(data.size()));
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
  *placed = requests;
  int64_t at = offset;
  for (OutgoingRequest& request : *placed) {
    *request.message.mutable_lane() = where;
    for (size_t i = 0; i < request.dense_data.size(); ++i) {
      absl::Span<const char>& data = request.dense_data[i];
      if (data.empty()) continue;
      std::memcpy(segment_->data() + at, data.data(), data.size());
      SharedBytes* shared = request.message.mutable_push()
                                ->mutable_gradients(static_cast<int>(i))
                                ->mutable_dense()
                                ->mutable_shared();
      shared->set_offset(at);
      shared->set_size(static_cast<int64_t>(data.size()));
      at += Aligned(data.size());
      data = {};
    }
  }
  return region;
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
