#include "server/ps/replica_forwarder.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/error_reason.h"
#include "common/status/grpc_status.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

std::shared_ptr<grpc::Channel> BackupChannel(const ReplicaForwarderOptions& options) {
  // Entries carry whole pushes, which a worker sends in chunks.
  ChannelSecurity security = options.security;
  security.max_message_bytes = std::numeric_limits<int>::max();
  return CreateSecureChannel(options.backup_address, security);
}

absl::Status NotPrimary(const ReplicaForwarderOptions& options, const absl::Status& refusal) {
  return WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "job ", options.job_id, ": this shard is no longer its primary (epoch ", options.epoch,
          "); its backup at ", options.backup_address, " refused it: ", refusal.ToString())),
      ERROR_REASON_NOT_PRIMARY);
}

}  // namespace

ReplicaForwarder::ReplicaForwarder(ReplicaForwarderOptions options, ShardMetrics& metrics)
    : options_(std::move(options)),
      metrics_(metrics),
      stub_(ParameterServer::NewStub(BackupChannel(options_))),
      state_held_(!options_.rebuilds_backup),
      joining_(!options_.rebuilds_backup),
      sender_([this] { Run(); }) {}

ReplicaForwarder::~ReplicaForwarder() {
  Stop(WithReason(absl::FailedPreconditionError(
                      absl::StrCat("job ", options_.job_id, " was dropped from this shard")),
                  ERROR_REASON_JOB_ENDED));
  sender_.join();
}

uint64_t ReplicaForwarder::Append(ReplicaEntry entry) {
  absl::MutexLock l(&mu_);
  const uint64_t sequence = next_sequence_++;
  if (DoneLocked()) return sequence;
  entry.set_sequence(sequence);
  unacknowledged_.push_back(std::make_shared<const ReplicaEntry>(std::move(entry)));
  return sequence;
}

absl::Status ReplicaForwarder::AwaitReplicated(uint64_t ticket) {
  absl::MutexLock l(&mu_);
  auto settled = [this, ticket]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return applied_through_ >= ticket || DoneLocked() || !WaitsForBackupLocked(ticket);
  };
  mu_.Await(absl::Condition(&settled));
  if (applied_through_ >= ticket || alone_) return absl::OkStatus();
  // Not waited for: acknowledged alone, before a rebuilt backup joined.
  return failure_;
}

void ReplicaForwarder::SendState(std::string bytes, uint32_t crc32c) {
  absl::MutexLock l(&mu_);
  state_ = std::make_shared<const std::string>(std::move(bytes));
  state_crc32c_ = crc32c;
}

bool ReplicaForwarder::joined() const {
  absl::MutexLock l(&mu_);
  return !DoneLocked() && joining_ && applied_through_ >= join_through_;
}

std::shared_ptr<const std::string> ReplicaForwarder::StateToSend() {
  absl::MutexLock l(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return state_held_ || state_ != nullptr || DoneLocked();
  };
  mu_.Await(absl::Condition(&ready));
  return state_held_ || DoneLocked() ? nullptr : state_;
}

bool ReplicaForwarder::WriteState(Stream& stream, const std::string& state) {
  uint32_t crc32c = 0;
  {
    absl::MutexLock l(&mu_);
    crc32c = state_crc32c_;
  }
  const int64_t total = static_cast<int64_t>(state.size());
  int64_t offset = 0;
  do {
    const int64_t size = std::min(options_.max_request_bytes, total - offset);
    ReplicateRequest request;
    request.set_job_id(options_.job_id);
    request.set_generation(options_.generation);
    request.set_epoch(options_.epoch);
    ReplicaState& piece = *request.mutable_state();
    piece.set_offset(offset);
    piece.set_total_bytes(total);
    piece.set_crc32c(crc32c);
    piece.set_data(state.substr(offset, size));
    if (!stream.Write(request)) return false;
    offset += size;
  } while (offset < total);
  return true;
}

void ReplicaForwarder::MaybeJoinLocked() {
  if (joining_ || !state_held_) return;
  const uint64_t decided = next_sequence_ - 1;
  if (decided - applied_through_ > static_cast<uint64_t>(options_.join_backlog)) return;
  joining_ = true;
  join_through_ = decided;
  state_ = nullptr;
  LOG(INFO) << "job " << options_.job_id << ": backup " << options_.backup_address
            << " holds the state and is " << decided - applied_through_
            << " entries behind; acknowledgements wait for it from entry " << decided + 1;
}

void ReplicaForwarder::GoOnAlone() {
  absl::MutexLock l(&mu_);
  if (DoneLocked()) return;
  alone_ = true;
  unacknowledged_.clear();
  if (context_ != nullptr) context_->TryCancel();
}

void ReplicaForwarder::Stop(absl::Status status) {
  absl::MutexLock l(&mu_);
  if (DoneLocked()) return;
  failure_ = std::move(status);
  unacknowledged_.clear();
  if (context_ != nullptr) context_->TryCancel();
}

absl::Status ReplicaForwarder::failure() const {
  absl::MutexLock l(&mu_);
  return failure_;
}

uint64_t ReplicaForwarder::applied_through() const {
  absl::MutexLock l(&mu_);
  return applied_through_;
}

void ReplicaForwarder::BreakStreamForTesting() {
  absl::MutexLock l(&mu_);
  if (context_ != nullptr) context_->TryCancel();
}

void ReplicaForwarder::Run() {
  absl::Duration backoff = options_.min_backoff;
  for (;;) {
    bool heard = false;
    if (!Serve(&heard)) return;
    if (heard) backoff = options_.min_backoff;
    absl::MutexLock l(&mu_);
    // Waits out the backoff unless the forwarder is done meanwhile.
    mu_.AwaitWithTimeout(
        absl::Condition(
            +[](ReplicaForwarder* f) ABSL_NO_THREAD_SAFETY_ANALYSIS { return f->DoneLocked(); },
            this),
        backoff);
    if (DoneLocked()) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool ReplicaForwarder::Serve(bool* heard) {
  grpc::ClientContext context;
  uint64_t sent = 0;
  bool held_before = false;
  {
    absl::MutexLock l(&mu_);
    if (DoneLocked()) return false;
    held_before = state_held_;
    context_ = &context;
    stream_ended_ = false;
    // Everything not acknowledged goes again.
    sent = applied_through_;
  }
  std::unique_ptr<Stream> stream = stub_->Replicate(&context);
  const uint64_t applied_before = applied_through();
  std::thread reader([this, &stream] { ReadAnswers(*stream); });
  const std::shared_ptr<const std::string> state = StateToSend();
  const bool state_sent = state == nullptr || WriteState(*stream, *state);
  while (state_sent) {
    std::deque<std::shared_ptr<const ReplicaEntry>> batch = NextBatch(sent);
    if (batch.empty()) break;
    ReplicateRequest request;
    request.set_job_id(options_.job_id);
    request.set_generation(options_.generation);
    request.set_epoch(options_.epoch);
    for (const auto& entry : batch) *request.add_entries() = *entry;
    if (!stream->Write(request)) break;
    sent = batch.back()->sequence();
    metrics_.RecordForwarded(static_cast<int64_t>(batch.size()));
  }
  context.TryCancel();
  reader.join();
  const grpc::Status finished = stream->Finish();
  absl::MutexLock l(&mu_);
  context_ = nullptr;
  *heard = applied_through_ > applied_before || state_held_ != held_before;
  if (!DoneLocked()) {
    LOG(WARNING) << "job " << options_.job_id << ": the stream to backup "
                 << options_.backup_address << " broke (" << finished.error_message()
                 << "); dialling again, entries after " << applied_through_ << " go again";
  }
  return !DoneLocked();
}

std::deque<std::shared_ptr<const ReplicaEntry>> ReplicaForwarder::NextBatch(uint64_t sent) {
  absl::MutexLock l(&mu_);
  auto ready = [this, sent]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return DoneLocked() || stream_ended_ ||
           (!unacknowledged_.empty() && unacknowledged_.back()->sequence() > sent);
  };
  mu_.Await(absl::Condition(&ready));
  std::deque<std::shared_ptr<const ReplicaEntry>> batch;
  if (DoneLocked() || stream_ended_) return batch;
  int64_t bytes = 0;
  for (const auto& entry : unacknowledged_) {
    if (entry->sequence() <= sent) continue;
    const int64_t size = static_cast<int64_t>(entry->ByteSizeLong());
    if (!batch.empty() && bytes + size > options_.max_request_bytes) break;
    bytes += size;
    batch.push_back(entry);
  }
  return batch;
}

void ReplicaForwarder::ReadAnswers(Stream& stream) {
  ReplicateResponse answer;
  while (stream.Read(&answer)) {
    absl::MutexLock l(&mu_);
    if (answer.has_error()) {
      const absl::Status refused = FromStatusProto(answer.error());
      if (ReasonOf(refused) != ERROR_REASON_REPLICA_FENCED) {
        // A backup that does not hold the job (restarted empty at its
        // address) or that cannot apply an entry: what waits for it goes
        // on waiting, until the coordinator, which finds the backup lost,
        // tells this primary to go on alone (GoOnAlone).
        LOG(WARNING) << "job " << options_.job_id << ": backup " << options_.backup_address
                     << " refused the entries after " << applied_through_ << ": " << refused
                     << "; pushes wait for it or for the coordinator to drop it";
        break;
      }
      // The backup was promoted: this primary was replaced.
      if (!DoneLocked()) failure_ = NotPrimary(options_, refused);
      unacknowledged_.clear();
      break;
    }
    if (answer.holds_state()) state_held_ = true;
    applied_through_ = std::max(applied_through_, answer.applied_through());
    while (!unacknowledged_.empty() && unacknowledged_.front()->sequence() <= applied_through_) {
      unacknowledged_.pop_front();
    }
    MaybeJoinLocked();
  }
  absl::MutexLock l(&mu_);
  stream_ended_ = true;
}

}  // namespace pstrain
