#include "server/ps/push_assembler.h"

#include <atomic>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/piece/dense_piece.h"
#include "common/piece/dense_segments.h"
#include "common/piece/piece_bytes.h"
#include "common/piece/rows_piece.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace internal {

// One push being assembled, shared by the parts that carry it. Thread-safe.
class PendingPush {
 public:
  enum class Claim { kClaimed, kResent, kBusy, kFailed };

  PendingPush(PushAssembler& assembler, std::shared_ptr<ParameterShard> shard,
              const PushRequest& first, absl::Time now)
      : assembler_(assembler),
        shard_(std::move(shard)),
        key_{first.id().worker(), first.id().incarnation(), first.id().sequence()},
        base_version_(first.base_version()),
        valid_until_(first.valid_until_unix_ms() > 0
                         ? absl::FromUnixMillis(first.valid_until_unix_ms())
                         : absl::InfiniteFuture()),
        num_parts_(std::max(1, first.num_parts())),
        source_(PushSourceOf(first)),
        started_(now),
        parts_(num_parts_, kUnclaimed) {}

  ~PendingPush() {
    int64_t reserved;
    {
      absl::MutexLock l(&mu_);
      reserved = reserved_;
    }
    assembler_.Release(reserved);
  }

  const PushKey& key() const { return key_; }
  ParameterShard& shard() { return *shard_; }

  Claim ClaimPart(const PushRequest& first, absl::Status* why) {
    absl::MutexLock l(&mu_);
    if (!failure_.ok()) {
      *why = failure_;
      return Claim::kFailed;
    }
    if (std::max(1, first.num_parts()) != num_parts_ || first.base_version() != base_version_) {
      *why = absl::InvalidArgumentError(absl::StrCat(
          "part ", first.part(), " says num_parts ", first.num_parts(), " and base_version ",
          first.base_version(), "; an earlier part said ", num_parts_, " and ", base_version_));
      return Claim::kFailed;
    }
    switch (parts_[first.part()]) {
      case kUnclaimed:
        parts_[first.part()] = kReceiving;
        return Claim::kClaimed;
      case kEnded:
        return Claim::kResent;
      default:
        *why = absl::AbortedError(
            absl::StrCat("part ", first.part(), " of this push is already being received"));
        return Claim::kBusy;
    }
  }

  // Adds the gradients of one message; on error the whole push fails.
  absl::Status AddGradients(PushRequest& m, const std::shared_ptr<const SharedSegment>& lane) {
    for (NamedTensor& g : *m.mutable_gradients()) {
      absl::Status s = AddGradient(g, lane);
      if (!s.ok()) {
        Fail(s);
        return s;
      }
    }
    return absl::OkStatus();
  }

  struct End {
    absl::Status failure;
    std::optional<PushReply> reply;  // set when this part completed the push
  };

  End EndPart(int part, ShardMetrics& metrics, Clock& clock) {
    {
      absl::MutexLock l(&mu_);
      if (parts_[part] != kEnded) {
        parts_[part] = kEnded;
        ++ended_;
      }
      if (!failure_.ok()) return {failure_, std::nullopt};
      if (ended_ < num_parts_) return {};
      if (!CheckCompleteLocked()) return {failure_, std::nullopt};
    }
    if (clock.Now() > valid_until_) {
      // The worker may have been declared lost while this push was on its
      // way (frozen, cut off): its data is someone else's now.
      Fail(WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "push (worker ", key_.worker, ", sequence ", key_.sequence,
                          ") completed after its worker's membership could have lapsed "
                          "(valid until ",
                          absl::FormatTime(valid_until_), "); not applied")),
                      ERROR_REASON_MEMBERSHIP_LAPSED));
      metrics.RecordRejected("membership_lapsed");
      absl::MutexLock l(&mu_);
      return {failure_, std::nullopt};
    }
    PushReply reply = Apply();
    int64_t bytes;
    {
      absl::MutexLock l(&mu_);
      bytes = bytes_;
    }
    metrics.RecordPush(bytes, clock.Now() - started_);
    return {absl::OkStatus(), std::move(reply)};
  }

  // The part's stream ended before end_of_push.
  void AbandonPart(int part) {
    absl::MutexLock l(&mu_);
    if (parts_[part] == kEnded) return;
    parts_[part] = kEnded;
    ++ended_;
    FailLocked(absl::AbortedError(absl::StrCat(
        "part ", part, " of push (worker ", key_.worker, ", incarnation ", key_.incarnation,
        ", sequence ", key_.sequence, ") ended without end_of_push; retry the push")));
  }

  void Fail(const absl::Status& status) {
    absl::MutexLock l(&mu_);
    FailLocked(status);
  }

  bool failed() const { return failed_.load(); }
  absl::Time last_activity() const { return absl::FromUnixNanos(last_activity_ns_.load()); }
  void Touch(absl::Time now) { last_activity_ns_.store(absl::ToUnixNanos(now)); }

 private:
  static constexpr uint8_t kUnclaimed = 0, kReceiving = 1, kEnded = 2;

  // Rows as the pieces they arrived in (taken from the messages); joined
  // only when they came in more than one piece.
  struct RowsSlot {
    std::vector<google::protobuf::RepeatedField<int64_t>> ids;
    std::vector<PieceBytes> values;

    // Leaves every piece in the first (rare: a push's rows of one table
    // normally travel in one message).
    void JoinPieces() {
      if (ids.size() == 1) return;
      std::string joined;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) ids[0].Add(ids[i].begin(), ids[i].end());
        absl::StrAppend(&joined, values[i].bytes());
      }
      ids.resize(1);
      values.resize(1);
      values[0] = PieceBytes(std::move(joined));
    }
  };

  void FailLocked(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!failure_.ok()) return;
    failure_ = status;
    failed_.store(true);
    // Free the buffers now; parts still arriving are dropped.
    dense_.clear();
    rows_.clear();
    assembler_.Release(reserved_);
    reserved_ = 0;
    assembler_.Forget(this);
  }

  // Whether every dense gradient arrived whole; fails the push if not.
  bool CheckCompleteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& [index, segments] : dense_) {
      absl::Status whole = segments.CheckComplete(shard_->variable(index).spec.name());
      if (!whole.ok()) {
        FailLocked(whole);
        return false;
      }
    }
    return true;
  }

  // Hands the complete push to its shard. Every part has ended: nobody
  // else touches the pieces now.
  PushReply Apply() {
    std::vector<std::vector<DenseSegment>> segments;
    segments.reserve(dense_.size());
    std::vector<GradientRef> refs;
    refs.reserve(dense_.size() + rows_.size());
    for (auto& [index, slot] : dense_) {
      const std::vector<DenseSegment>& view = segments.emplace_back(slot.View());
      refs.push_back(GradientRef{index, false, {}, {}, view});
    }
    for (auto& [index, slot] : rows_) {
      slot.JoinPieces();
      const absl::string_view values = slot.values[0].bytes();
      refs.push_back(GradientRef{
          index, true, absl::MakeConstSpan(slot.ids[0].data(), slot.ids[0].size()),
          absl::MakeConstSpan(reinterpret_cast<const float*>(values.data()), values.size() / 4)});
    }
    return shard_->Push(key_, base_version_, refs, source_);
  }

  absl::Status AddGradient(NamedTensor& g, const std::shared_ptr<const SharedSegment>& lane) {
    ASSIGN_OR_RETURN(const int index, shard_->FindVariable(g.name()));
    const ShardVariable& v = shard_->variable(index);
    switch (g.value_case()) {
      case NamedTensor::kDense: {
        DenseTensor& d = *g.mutable_dense();
        ASSIGN_OR_RETURN(PieceBytes bytes, TakeBytes(v.spec.name(), d.has_shared(), d.shared(),
                                                     *d.mutable_data(), lane));
        return AddDense(index, v, d, std::move(bytes));
      }
      case NamedTensor::kRows: {
        SparseRows& r = *g.mutable_rows();
        ASSIGN_OR_RETURN(PieceBytes values, TakeBytes(v.spec.name(), r.has_shared(), r.shared(),
                                                      *r.mutable_values(), lane));
        return AddRows(index, v, r, std::move(values));
      }
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("the gradient of \"", v.spec.name(), "\" is empty"));
    }
  }

  // A piece's bytes: taken from its message (the stream reads its next
  // message into fresh storage), or borrowed where they lie in the lane.
  static absl::StatusOr<PieceBytes> TakeBytes(const std::string& name, bool in_lane,
                                              const SharedBytes& at, std::string& in_message,
                                              const std::shared_ptr<const SharedSegment>& lane) {
    if (!in_lane) return PieceBytes(std::move(in_message));
    if (lane == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("the gradient of \"", name,
                       "\" names bytes in a shared-memory lane, but its request names no lane"));
    }
    return PieceBytes(absl::string_view(lane->data() + at.offset(), at.size()), lane);
  }

  // A piece of a dense gradient: kept as a segment of its variable's.
  absl::Status AddDense(int index, const ShardVariable& v, const DenseTensor& d, PieceBytes bytes) {
    const std::string& name = v.spec.name();
    if (v.embedding) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", name, "\" is an embedding table; push its gradient as rows"));
    }
    const TensorShape& shape = v.spec.shape();
    ASSIGN_OR_RETURN(const DensePlacement placed,
                     PlaceDensePiece(name, d, bytes.size(),
                                     absl::MakeConstSpan(shape.dims().data(), shape.dims_size())));
    // bfloat16 (TrainingSpec.wire) is widened on arrival: the pieces are
    // kept, and applied, as float32.
    if (placed.narrowed) {
      std::string widened(placed.size, '\0');
      WriteDensePiece(placed, bytes.bytes().data(), widened.data());
      bytes = PieceBytes(std::move(widened));
    }
    absl::MutexLock l(&mu_);
    if (!failure_.ok()) return failure_;
    RETURN_IF_ERROR(CheckOneKindLocked(index, name, rows_));
    auto it = dense_.find(index);
    if (it == dense_.end()) {
      const int64_t total = v.num_elements * 4;
      RETURN_IF_ERROR(ReserveLocked(total));
      it = dense_.emplace(index, DenseSegments(total)).first;
    }
    RETURN_IF_ERROR(it->second.Add(name, placed.offset, std::move(bytes)));
    bytes_ += placed.wire_bytes;
    return absl::OkStatus();
  }

  // A piece of a rows gradient: kept as it came; joined at the end when
  // a variable's rows came in several.
  absl::Status AddRows(int index, const ShardVariable& v, SparseRows& r, PieceBytes values) {
    const std::string& name = v.spec.name();
    if (!v.embedding && v.spec.shape().dims_size() == 0) {
      return absl::InvalidArgumentError(absl::StrCat("\"", name, "\" is a scalar: no rows"));
    }
    const int64_t values_bytes = values.size();
    RETURN_IF_ERROR(CheckRowsPiece(name, r, values_bytes, v.row_width));
    absl::MutexLock l(&mu_);
    if (!failure_.ok()) return failure_;
    RETURN_IF_ERROR(CheckOneKindLocked(index, name, dense_));
    RETURN_IF_ERROR(ReserveLocked(values_bytes + 8 * r.ids_size()));
    RowsSlot& slot = rows_[index];
    bytes_ += values_bytes;
    slot.ids.emplace_back().Swap(r.mutable_ids());
    slot.values.push_back(std::move(values));
    return absl::OkStatus();
  }

  // InvalidArgument when `other` (the gradients of the other kind) holds
  // variable `index` already.
  template <typename Slots>
  static absl::Status CheckOneKindLocked(int index, const std::string& name, const Slots& other) {
    if (!other.contains(index)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("the push holds both rows and a dense gradient of \"", name, "\""));
  }

  absl::Status ReserveLocked(int64_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    RETURN_IF_ERROR(assembler_.Reserve(bytes));
    reserved_ += bytes;
    return absl::OkStatus();
  }

  PushAssembler& assembler_;
  // Constant after construction.
  const std::shared_ptr<ParameterShard> shard_;
  const PushKey key_;
  const int64_t base_version_;
  // PushRequest.valid_until_unix_ms; InfiniteFuture when not given.
  const absl::Time valid_until_;
  const int num_parts_;
  // Examples and data lease of the push, from its first message (every
  // message of a push carries the same); the origin was validated by
  // StartPart.
  const PushSource source_;
  const absl::Time started_;

  std::atomic<bool> failed_{false};
  std::atomic<int64_t> last_activity_ns_{0};

  absl::Mutex mu_;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::vector<uint8_t> parts_ ABSL_GUARDED_BY(mu_);
  int ended_ ABSL_GUARDED_BY(mu_) = 0;
  // Written under mu_; read without it once every part has ended.
  absl::flat_hash_map<int, DenseSegments> dense_;
  absl::flat_hash_map<int, RowsSlot> rows_;
  int64_t reserved_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace internal

using internal::PendingPush;

PushPart::PushPart(PushAssembler& assembler, const PushRequest& first,
                   std::shared_ptr<PendingPush> push, absl::Status failure,
                   std::optional<PushReply> decided)
    : assembler_(assembler),
      id_(first.id()),
      part_(first.part()),
      push_(std::move(push)),
      failure_(std::move(failure)),
      decided_(std::move(decided)) {}

PushPart::~PushPart() {
  if (!ended_) Abandon();
}

bool PushPart::Matches(const PushRequest& m) const {
  return m.id().worker() == id_.worker() && m.id().incarnation() == id_.incarnation() &&
         m.id().sequence() == id_.sequence() && m.part() == part_;
}

PushResult PushPart::Result(const PushReply& reply) const {
  PushResult r;
  *r.mutable_id() = id_;
  r.set_outcome(reply.outcome);
  r.set_version(reply.version);
  if (!reply.status.ok()) *r.mutable_status() = ToStatusProto(reply.status);
  return r;
}

PushPart::Step PushPart::Fail(absl::Status status) {
  Step step;
  step.finished = ended_;
  if (failure_.ok()) failure_ = std::move(status);
  if (!answered_) {
    answered_ = true;
    PushReply reply;
    reply.outcome = PUSH_OUTCOME_REJECTED;
    reply.status = failure_;
    if (push_ != nullptr) reply.version = push_->shard().version();
    step.reply = Result(reply);
  }
  return step;
}

PushPart::Step PushPart::Add(PushRequest& m, const std::shared_ptr<const SharedSegment>& lane) {
  if (ended_) return Fail(absl::InvalidArgumentError("a message after end_of_push"));
  ended_ = m.end_of_push();
  if (!failure_.ok()) return Fail(failure_);
  if (decided_.has_value() || push_ == nullptr) {
    // A retry of a decided push, or a part sent again: drop the data.
    Step step;
    step.finished = ended_;
    if (ended_ && !answered_) {
      answered_ = true;
      step.reply = Result(*decided_);
    }
    return step;
  }
  push_->Touch(assembler_.clock_.Now());
  if (absl::Status s = push_->AddGradients(m, lane); !s.ok()) return Fail(s);
  if (!ended_) return {};
  PendingPush::End end = push_->EndPart(part_, assembler_.metrics_, assembler_.clock_);
  if (!end.failure.ok()) return Fail(end.failure);
  Step step;
  step.finished = true;
  answered_ = true;
  if (end.reply.has_value()) {
    assembler_.Forget(push_.get());
    step.reply = Result(*end.reply);
  } else {
    PushReply received;
    received.outcome = PUSH_OUTCOME_PART_RECEIVED;
    received.version = push_->shard().version();
    step.reply = Result(received);
  }
  push_.reset();
  return step;
}

void PushPart::Abandon() {
  if (push_ != nullptr && !decided_.has_value()) push_->AbandonPart(part_);
  ended_ = true;
  push_.reset();
}

PushAssembler::PushAssembler(const PushAssemblerOptions& options, Clock& clock,
                             ShardMetrics& metrics)
    : options_(options), clock_(clock), metrics_(metrics) {}

PushAssembler::~PushAssembler() = default;

absl::Status PushAssembler::Reserve(int64_t bytes) {
  absl::MutexLock l(&mu_);
  if (pending_bytes_ + bytes > options_.max_pending_bytes) {
    return WithReason(
        absl::ResourceExhaustedError(absl::StrCat(
            "the shard is assembling ", pending_bytes_, " bytes of pushes; ", bytes,
            " more would pass its limit of ", options_.max_pending_bytes, "; retry later")),
        ERROR_REASON_SHARD_BUSY);
  }
  pending_bytes_ += bytes;
  return absl::OkStatus();
}

void PushAssembler::Release(int64_t bytes) {
  absl::MutexLock l(&mu_);
  pending_bytes_ -= bytes;
}

void PushAssembler::Forget(const PendingPush* push) {
  // Destroyed after the lock is released: a PendingPush releases its bytes
  // under mu_.
  std::shared_ptr<PendingPush> doomed;
  absl::MutexLock l(&mu_);
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->second.get() == push) {
      doomed = std::move(it->second);
      pending_.erase(it);
      return;
    }
  }
}

int PushAssembler::pending_pushes() const {
  absl::MutexLock l(&mu_);
  return static_cast<int>(pending_.size());
}

int64_t PushAssembler::pending_bytes() const {
  absl::MutexLock l(&mu_);
  return pending_bytes_;
}

std::unique_ptr<PushPart> PushAssembler::StartPart(
    absl::StatusOr<std::shared_ptr<ParameterShard>> shard, const PushRequest& first) {
  auto failed = [&](absl::Status status) {
    return std::unique_ptr<PushPart>(
        new PushPart(*this, first, nullptr, std::move(status), std::nullopt));
  };
  if (!shard.ok()) return failed(shard.status());
  const PushId& id = first.id();
  const int num_parts = std::max(1, first.num_parts());
  if (first.num_parts() < 0 || first.num_parts() > options_.max_parts || first.part() < 0 ||
      first.part() >= num_parts) {
    return failed(absl::InvalidArgumentError(
        absl::StrCat("part ", first.part(), " of num_parts ", first.num_parts(),
                     ": need 0 <= part < num_parts <= ", options_.max_parts)));
  }
  if (first.has_origin()) {
    if (absl::Status bad = LeaseSliceFromProto(first.origin()).status(); !bad.ok()) {
      return failed(std::move(bad));
    }
  }
  const PushKey key{id.worker(), id.incarnation(), id.sequence()};
  if (std::optional<PushReply> decided = (*shard)->DecidedBefore(key)) {
    return std::unique_ptr<PushPart>(
        new PushPart(*this, first, nullptr, absl::OkStatus(), std::move(decided)));
  }
  const absl::Time now = clock_.Now();
  const Key table_key{first.job_id(), id.worker(), id.incarnation(), id.sequence()};
  for (int attempt = 0;; ++attempt) {
    std::shared_ptr<PendingPush> push;
    std::vector<std::shared_ptr<PendingPush>> expired;  // destroyed unlocked
    {
      absl::MutexLock l(&mu_);
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second->last_activity() + options_.abandon_after < now) {
          expired.push_back(std::move(it->second));
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
      std::shared_ptr<PendingPush>& slot = pending_[table_key];
      if (slot == nullptr || slot->failed() || &slot->shard() != shard->get()) {
        if (slot != nullptr) expired.push_back(std::move(slot));
        slot = std::make_shared<PendingPush>(*this, *shard, first, now);
        slot->Touch(now);
      }
      push = slot;
    }
    absl::Status why;
    switch (push->ClaimPart(first, &why)) {
      case PendingPush::Claim::kClaimed:
        return std::unique_ptr<PushPart>(
            new PushPart(*this, first, std::move(push), absl::OkStatus(), std::nullopt));
      case PendingPush::Claim::kResent: {
        // The part arrived whole before: acknowledge it again, drop the data.
        PushReply received;
        received.outcome = PUSH_OUTCOME_PART_RECEIVED;
        received.version = (*shard)->version();
        return std::unique_ptr<PushPart>(
            new PushPart(*this, first, nullptr, absl::OkStatus(), received));
      }
      case PendingPush::Claim::kFailed:
        // Failed between lookup and claim: start afresh once.
        if (push->failed() && attempt == 0) continue;
        return failed(why);
      case PendingPush::Claim::kBusy:
        return failed(why);
    }
  }
}

}  // namespace pstrain
