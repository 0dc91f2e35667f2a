#include "server/ps/push_pull_session.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/net/lane_region.h"
#include "common/status/grpc_status.h"

namespace pstrain {
namespace {

constexpr int64_t kFloatBytes = 4;
// Dense pieces smaller than this stay in the answer's message: a slice of
// their own would cost more than the copy it saves.
constexpr int64_t kMinSliceBytes = 4096;

}  // namespace

struct PushPullSession::Outgoing {
  PushPullResponse message;
  std::unique_ptr<PullCursor> cursor;
  // Where the pull's values go, when it came through a lane, and how much
  // of the region earlier messages used.
  LaneTarget lane;
  int64_t lane_used = 0;
  uint64_t tag = 0;
  int64_t charge = 0;  // counted in queued_bytes_
  absl::Time start;
  int64_t pulled_bytes = 0;
  bool finished = false;  // written whole (once its last write completes)
};

PushPullSession::PushPullSession(ShardStore& store, LaneRegistry* lanes,
                                 PushPullSessionOptions options, SessionWire& wire)
    : store_(store), lanes_(lanes), options_(options), wire_(wire) {}

PushPullSession::~PushPullSession() = default;

void PushPullSession::Start() { wire_.ReadNext(); }

// The segment of `request`'s lane, checked to hold its region and, with a
// push, to hold each gradient kept in the region (dense bytes, rows'
// values): the push assembler reads them there.
absl::StatusOr<PushPullSession::LaneTarget> PushPullSession::FindLane(
    const PushPullRequest& request) {
  if (lanes_ == nullptr) {
    return absl::FailedPreconditionError(
        "a request names a shared-memory lane, but this shard has lanes off");
  }
  absl::StatusOr<std::shared_ptr<const SharedSegment>> segment =
      lanes_->Find(request.lane().lane());
  if (!segment.ok()) return segment.status();
  LaneTarget target{*std::move(segment), request.lane()};
  if (!RegionFits(target.region, target.segment->size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("a lane region [", target.region.offset(), ", +", target.region.size(),
                     ") outside its segment of ", target.segment->size(), " bytes"));
  }
  if (!request.has_push()) return target;
  int64_t in_lane = 0;
  for (const NamedTensor& gradient : request.push().gradients()) {
    const bool dense = gradient.has_dense() && gradient.dense().has_shared();
    const bool rows = gradient.has_rows() && gradient.rows().has_shared();
    if (!dense && !rows) continue;
    const SharedBytes& bytes = dense ? gradient.dense().shared() : gradient.rows().shared();
    if (!RegionHolds(target.region, bytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the gradient of \"", gradient.name(), "\" lies outside its lane region"));
    }
    in_lane += bytes.size();
  }
  store_.metrics().RecordLaneBytes("push", in_lane);
  return target;
}

void PushPullSession::OnRequest(PushPullRequest& request, const absl::Status& parsed) {
  const uint64_t tag = parsed.ok() ? request.tag() : 0;
  absl::StatusOr<LaneTarget> lane = LaneTarget{};
  if (parsed.ok() && request.has_lane()) lane = FindLane(request);
  if (!parsed.ok()) {
    SendError(tag, absl::InvalidArgumentError(
                       absl::StrCat("a PushPullRequest that does not parse: ", parsed.message())));
  } else if (request.has_push()) {
    HandlePush(tag, *request.mutable_push(), lane);
  } else if (request.has_pull() && !lane.ok()) {
    SendError(tag, lane.status());
  } else if (request.has_pull()) {
    HandlePull(tag, request.pull(), *std::move(lane));
  } else {
    SendError(tag, absl::InvalidArgumentError("a PushPullRequest with neither push nor pull"));
  }
  bool read_now = false;
  {
    absl::MutexLock l(&mu_);
    if (queued_bytes_ > options_.max_queued_bytes) {
      read_paused_ = true;
    } else {
      read_now = true;
    }
  }
  if (read_now) wire_.ReadNext();
}

void PushPullSession::OnReadsDone() {
  // Unfinished parts fail.
  parts_.clear();
  bool finish;
  {
    absl::MutexLock l(&mu_);
    reads_done_ = true;
    finish = ShouldFinish();
  }
  if (finish) wire_.End();
}

void PushPullSession::OnWriteDone(bool ok) {
  if (!ok) {
    absl::MutexLock l(&mu_);
    write_failed_ = true;
  }
  WriteNext();
}

void PushPullSession::Cancel() {
  std::vector<std::pair<std::shared_ptr<ParameterShard>, uint64_t>> waits;
  {
    absl::MutexLock l(&mu_);
    for (const auto& [token, wait] : waits_) {
      if (wait.second != 0) waits.push_back(wait);
    }
  }
  for (auto& [shard, id] : waits) shard->version_gate().Cancel(id);
}

// `lane`: the message's lane, or why it could not be had (a part with a
// message whose could not fails).
void PushPullSession::HandlePush(uint64_t tag, PushRequest& push,
                                 const absl::StatusOr<LaneTarget>& lane) {
  auto it = parts_.find(tag);
  if (it != parts_.end() && (!it->second->Matches(push) || !lane.ok())) {
    parts_.erase(it);  // the tag now carries another push: the old part fails
    it = parts_.end();
  }
  if (it == parts_.end()) {
    absl::StatusOr<std::shared_ptr<ParameterShard>> shard =
        lane.ok() ? store_.GetJob(push.job_id(), push.generation()) : lane.status();
    it = parts_.emplace(tag, store_.pushes().StartPart(std::move(shard), push)).first;
  }
  PushPart::Step step = it->second->Add(push, lane.ok() ? lane->segment : nullptr);
  if (step.finished) parts_.erase(it);
  if (step.reply.has_value()) {
    Outgoing out;
    out.message.set_tag(tag);
    *out.message.mutable_push() = std::move(*step.reply);
    Enqueue(std::move(out));
  }
}

// `lane.segment` set: the pull's values go to `lane.region`.
void PushPullSession::HandlePull(uint64_t tag, const PullRequest& pull, LaneTarget lane) {
  absl::StatusOr<std::shared_ptr<ParameterShard>> shard =
      store_.GetJob(pull.job_id(), pull.generation());
  if (!shard.ok()) return SendError(tag, shard.status());
  if (absl::Status s = ValidatePull(**shard, pull).status(); !s.ok()) return SendError(tag, s);
  const absl::Time start = store_.clock().Now();
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
      pull.min_version(), PullDeadline(store_.clock().Now(), pull, options_.max_wait),
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
        if (finish) wire_.End();
      });
  absl::MutexLock l(&mu_);
  auto it = waits_.find(token);
  if (it != waits_.end()) it->second.second = id;
}

void PushPullSession::QueuePull(uint64_t tag, std::shared_ptr<ParameterShard> shard,
                                const PullRequest& pull, LaneTarget lane, absl::Time start) {
  Outgoing out;
  int64_t chunk_bytes = options_.chunk_bytes;
  // Through a lane, one message says where every dense value lies; what
  // finds no room in the region travels in the message, up to the region's
  // size. Rows keep their chunks: their ids ride in the message (up to
  // twice their values' bytes, for rows of one float), which must stay
  // under the message limit.
  if (lane.segment != nullptr && pull.rows_size() == 0) {
    chunk_bytes = std::max(chunk_bytes, lane.region.size());
  }
  out.cursor = std::make_unique<PullCursor>(std::move(shard), pull, chunk_bytes);
  out.lane = std::move(lane);
  out.tag = tag;
  out.charge = options_.chunk_bytes;
  out.start = start;
  Enqueue(std::move(out));
}

void PushPullSession::SendError(uint64_t tag, const absl::Status& status) {
  Outgoing out;
  out.message.set_tag(tag);
  *out.message.mutable_error() = ToStatusProto(status);
  Enqueue(std::move(out));
}

void PushPullSession::Enqueue(Outgoing out) {
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

void PushPullSession::WriteNext() {
  while (true) {
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
      if (read_paused_ && !reads_done_ && queued_bytes_ <= options_.max_queued_bytes / 2) {
        read_paused_ = false;
        resume_read = true;
      }
      finish = ShouldFinish();
    }
    if (resume_read) wire_.ReadNext();
    if (finish) wire_.End();
    if (front == nullptr) return;
    PulledSlices slices;
    if (front->cursor == nullptr) {
      front->finished = true;
    } else {
      slices = ReadChunk(*front);
    }
    const SessionWire::Written written = wire_.Write(front->message, std::move(slices));
    if (written == SessionWire::Written::kPending) return;
    if (written == SessionWire::Written::kFailed) {
      absl::MutexLock l(&mu_);
      write_failed_ = true;
    }
  }
}

// Reads the next chunk while the previous one travels, its dense values
// straight into the slices that will be sent or, through a lane, into its
// region while that has room.
PulledSlices PushPullSession::ReadChunk(Outgoing& front) {
  PulledSlices slices;
  std::vector<std::pair<int, SharedBytes>> in_lane;
  const bool takes_slices = wire_.TakesSlices();
  auto destination = [&front, &slices, &in_lane, takes_slices](
                         int value, PullCursor::PieceKind kind, int64_t count) -> float* {
    const int64_t bytes = count * kFloatBytes;
    if (front.lane.segment != nullptr) {
      if (bytes > front.lane.region.size() - front.lane_used) return nullptr;
      SharedBytes& at = in_lane.emplace_back(value, SharedBytes()).second;
      at.set_offset(front.lane.region.offset() + front.lane_used);
      at.set_size(bytes);
      front.lane_used += bytes;
      return reinterpret_cast<float*>(front.lane.segment->data() + at.offset());
    }
    if (!takes_slices || kind == PullCursor::PieceKind::kRows || bytes < kMinSliceBytes) {
      return nullptr;
    }
    slices.emplace_back(value, NewValueSlice(bytes));
    return reinterpret_cast<float*>(const_cast<uint8_t*>(slices.back().second.begin()));
  };
  front.message.Clear();
  front.message.set_tag(front.tag);
  const absl::Status s = front.cursor->Next(front.message.mutable_pull(), destination);
  if (!s.ok()) {
    slices.clear();
    front.message.Clear();
    front.message.set_tag(front.tag);
    *front.message.mutable_error() = ToStatusProto(s);
    front.finished = true;
    return slices;
  }
  PullResponse& pull = *front.message.mutable_pull();
  front.pulled_bytes += InlineValueBytes(pull);  // what the message itself carries
  for (const auto& [value, slice] : slices) {
    front.pulled_bytes += static_cast<int64_t>(slice.size());
  }
  int64_t lane_bytes = 0;
  for (auto& [value, at] : in_lane) {
    lane_bytes += at.size();
    NamedTensor* t = pull.mutable_values(value);
    *(t->has_rows() ? t->mutable_rows()->mutable_shared() : t->mutable_dense()->mutable_shared()) =
        std::move(at);
  }
  front.pulled_bytes += lane_bytes;
  if (front.lane.segment != nullptr) store_.metrics().RecordLaneBytes("pull", lane_bytes);
  front.finished = front.cursor->done();
  if (front.finished) {
    store_.metrics().RecordPull(front.pulled_bytes, store_.clock().Now() - front.start);
  }
  return slices;
}

bool PushPullSession::ShouldFinish() {
  if (finished_ || !reads_done_ || writing_ || !waits_.empty()) return false;
  finished_ = true;
  return true;
}

}  // namespace pstrain
