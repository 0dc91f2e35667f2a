#include "worker/testing/fake_parameter_server.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/placement/row_placement.h"
#include "common/status/grpc_status.h"

namespace pstrain {
namespace worker {
namespace {

constexpr float kLearningRate = 0.1f;

PushPullResponse ErrorResponse(uint64_t tag, const absl::Status& status) {
  PushPullResponse r;
  r.set_tag(tag);
  *r.mutable_error() = ToStatusProto(status);
  return r;
}

}  // namespace

// One PushPull stream: reads one message at a time, queues answers and
// writes them one at a time; finishes once the client is done sending and
// every answer is written, or at once with UNAVAILABLE to lose a reply.
class FakePushPullStream : public grpc::ServerBidiReactor<PushPullRequest, PushPullResponse> {
 public:
  explicit FakePushPullStream(FakeParameterServer& server) : server_(server) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      bool finish;
      {
        absl::MutexLock l(&mu_);
        reads_done_ = true;
        finish = ShouldFinish();
      }
      if (finish) Finish(status_);
      return;
    }
    std::vector<PushPullResponse> answers;
    bool drop = false;
    if (request_.has_push()) {
      std::optional<PushResult> reply = server_.OnPushMessage(request_.push(), &drop);
      if (reply.has_value()) {
        PushPullResponse& r = answers.emplace_back();
        r.set_tag(request_.tag());
        *r.mutable_push() = *std::move(reply);
      }
    } else if (request_.has_pull()) {
      answers = server_.OnPull(request_.tag(), request_.pull());
    } else {
      answers.push_back(
          ErrorResponse(request_.tag(), absl::InvalidArgumentError("neither push nor pull")));
    }
    bool finish = false;
    const PushPullResponse* write = nullptr;
    {
      absl::MutexLock l(&mu_);
      if (drop) {
        // Lose the answer: stop reading and end the stream as a broken
        // connection would.
        reads_done_ = true;
        status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "reply dropped by the test");
        finish = ShouldFinish();
      } else {
        for (PushPullResponse& a : answers) queue_.push_back(std::move(a));
        if (!writing_ && !queue_.empty()) {
          writing_ = true;
          write = &queue_.front();
        }
      }
    }
    if (finish) return Finish(status_);
    if (drop) return;
    // The front stays put until its write is done (OnWriteDone pops it).
    if (write != nullptr) StartWrite(write);
    StartRead(&request_);
  }

  void OnWriteDone(bool ok) override {
    bool finish = false;
    const PushPullResponse* next = nullptr;
    {
      absl::MutexLock l(&mu_);
      queue_.pop_front();
      if (!ok) queue_.clear();
      if (queue_.empty()) {
        writing_ = false;
        finish = ShouldFinish();
      } else {
        next = &queue_.front();
      }
    }
    if (next != nullptr) StartWrite(next);
    if (finish) Finish(status_);
  }

  void OnDone() override { delete this; }

 private:
  bool ShouldFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || !reads_done_ || writing_) return false;
    finished_ = true;
    return true;
  }

  FakeParameterServer& server_;
  PushPullRequest request_;  // reading side only
  absl::Mutex mu_;
  std::deque<PushPullResponse> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ = grpc::Status::OK;
};

FakeParameterServer::FakeParameterServer(int shard_index, int num_shards)
    : shard_index_(shard_index), num_shards_(num_shards) {}

FakeParameterServer::~FakeParameterServer() { Shutdown(); }

absl::Status FakeParameterServer::Start() {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(16 << 20);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) return absl::UnavailableError("cannot start the fake ps");
  address_ = absl::StrCat("127.0.0.1:", port);
  return absl::OkStatus();
}

void FakeParameterServer::Shutdown() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
    server_.reset();
  }
}

void FakeParameterServer::AddDense(const std::string& name, std::vector<int64_t> shape,
                                   std::vector<float> values) {
  absl::MutexLock l(&mu_);
  dense_[name] = {std::move(shape), std::move(values)};
}

void FakeParameterServer::AddTable(const std::string& name, int64_t dim) {
  absl::MutexLock l(&mu_);
  tables_[name].dim = dim;
}

void FakeParameterServer::set_pull_chunk_bytes(int64_t bytes) {
  absl::MutexLock l(&mu_);
  pull_chunk_bytes_ = bytes;
}

void FakeParameterServer::DropReplyOf(uint64_t sequence) {
  absl::MutexLock l(&mu_);
  drop_.insert(sequence);
}

void FakeParameterServer::RefuseEarly(uint64_t sequence, absl::Status status) {
  absl::MutexLock l(&mu_);
  refuse_early_[sequence] = std::move(status);
}

int FakeParameterServer::refused_parts_ended() const {
  absl::MutexLock l(&mu_);
  return refused_parts_ended_;
}

int FakeParameterServer::refused_messages() const {
  absl::MutexLock l(&mu_);
  return refused_messages_;
}

int FakeParameterServer::streams_opened() const {
  absl::MutexLock l(&mu_);
  return streams_opened_;
}

void FakeParameterServer::SetOutcome(
    std::function<std::optional<PushResult>(const PushRequest&)> outcome) {
  absl::MutexLock l(&mu_);
  outcome_ = std::move(outcome);
}

std::vector<FakeParameterServer::ReceivedPush> FakeParameterServer::received() const {
  absl::MutexLock l(&mu_);
  return received_;
}

int FakeParameterServer::applied() const {
  absl::MutexLock l(&mu_);
  return applied_;
}

void FakeParameterServer::SetVersion(int64_t version) {
  absl::MutexLock l(&mu_);
  version_ = version;
}

int64_t FakeParameterServer::version() const {
  absl::MutexLock l(&mu_);
  return version_;
}

std::vector<float> FakeParameterServer::dense(const std::string& name) const {
  absl::MutexLock l(&mu_);
  auto it = dense_.find(name);
  return it == dense_.end() ? std::vector<float>() : it->second.second;
}

int FakeParameterServer::pulls() const {
  absl::MutexLock l(&mu_);
  return pulls_;
}

int64_t FakeParameterServer::largest_message_bytes() const {
  absl::MutexLock l(&mu_);
  return largest_message_bytes_;
}

grpc::ServerBidiReactor<PushPullRequest, PushPullResponse>* FakeParameterServer::PushPull(
    grpc::CallbackServerContext* /*context*/) {
  {
    absl::MutexLock l(&mu_);
    ++streams_opened_;
  }
  return new FakePushPullStream(*this);
}

std::vector<float> FakeParameterServer::Row(const Table& table, int64_t id) const {
  auto it = table.rows.find(id);
  if (it != table.rows.end()) return it->second;
  return std::vector<float>(table.dim, 0.01f * static_cast<float>(id % 7));
}

std::optional<PushResult> FakeParameterServer::OnPushMessage(const PushRequest& message,
                                                             bool* drop) {
  absl::MutexLock l(&mu_);
  largest_message_bytes_ =
      std::max<int64_t>(largest_message_bytes_, static_cast<int64_t>(message.ByteSizeLong()));
  const Key key{message.id().worker(), message.id().incarnation(), message.id().sequence()};
  if (auto refusal = refuse_early_.find(message.id().sequence()); refusal != refuse_early_.end()) {
    ++refused_messages_;
    const bool first = refused_open_.insert({key, message.part()}).second;
    if (message.end_of_push()) {
      refused_open_.erase({key, message.part()});
      ++refused_parts_ended_;
    }
    if (!first) return std::nullopt;
    PushResult result;
    *result.mutable_id() = message.id();
    result.set_outcome(PUSH_OUTCOME_REJECTED);
    *result.mutable_status() = ToStatusProto(refusal->second);
    result.set_version(version_);
    return result;
  }
  Pending& pending = pending_[key];
  ReceivedPush& push = pending.push;
  push.id = message.id();
  push.base_version = message.base_version();
  push.examples = message.examples();
  if (message.has_origin()) push.origin = message.origin();
  push.num_parts = std::max(1, message.num_parts());
  ++push.messages;
  for (const NamedTensor& g : message.gradients()) {
    if (g.has_dense()) {
      const DenseTensor& d = g.dense();
      const int64_t total =
          d.has_chunk() ? d.chunk().total_bytes() : static_cast<int64_t>(d.data().size());
      const int64_t offset = d.has_chunk() ? d.chunk().offset() : 0;
      std::vector<float>& values = push.dense[g.name()];
      values.resize(total / 4);
      std::memcpy(reinterpret_cast<char*>(values.data()) + offset, d.data().data(),
                  d.data().size());
      pending.dense_bytes[g.name()] += static_cast<int64_t>(d.data().size());
    } else if (g.has_rows()) {
      const SparseRows& r = g.rows();
      const float* values = reinterpret_cast<const float*>(r.values().data());
      for (int i = 0; i < r.ids_size(); ++i) {
        push.rows[g.name()][r.ids(i)].assign(values + i * r.row_width(),
                                             values + (i + 1) * r.row_width());
      }
    }
  }
  if (!message.end_of_push()) return std::nullopt;
  pending.parts_done.insert(message.part());
  PushResult result;
  *result.mutable_id() = message.id();
  if (static_cast<int>(pending.parts_done.size()) < push.num_parts) {
    result.set_outcome(PUSH_OUTCOME_PART_RECEIVED);
    result.set_version(version_);
    return result;
  }
  // Complete: decide once per id.
  auto seen = decided_.find(key);
  if (seen != decided_.end()) {
    push.outcome = seen->second == PUSH_OUTCOME_STALE ? PUSH_OUTCOME_STALE : PUSH_OUTCOME_DUPLICATE;
    result.set_outcome(push.outcome);
  } else {
    std::optional<PushResult> chosen;
    if (outcome_) chosen = outcome_(message);
    if (chosen.has_value()) {
      result = *chosen;
      *result.mutable_id() = message.id();
    } else {
      for (const auto& [name, grad] : push.dense) {
        auto var = dense_.find(name);
        if (var == dense_.end()) continue;
        for (size_t i = 0; i < grad.size() && i < var->second.second.size(); ++i) {
          var->second.second[i] -= kLearningRate * grad[i];
        }
      }
      for (const auto& [name, rows] : push.rows) {
        auto table = tables_.find(name);
        if (table == tables_.end()) continue;
        for (const auto& [id, grad] : rows) {
          std::vector<float> row = Row(table->second, id);
          for (size_t i = 0; i < row.size() && i < grad.size(); ++i) {
            row[i] -= kLearningRate * grad[i];
          }
          table->second.rows[id] = std::move(row);
        }
      }
      ++version_;
      ++applied_;
      result.set_outcome(PUSH_OUTCOME_APPLIED);
    }
    push.outcome = result.outcome();
    if (push.outcome != PUSH_OUTCOME_REJECTED) decided_[key] = push.outcome;
  }
  result.set_version(version_);
  received_.push_back(push);
  pending_.erase(key);
  *drop = drop_.erase(message.id().sequence()) > 0;
  return result;
}

std::vector<PushPullResponse> FakeParameterServer::OnPull(uint64_t tag, const PullRequest& pull) {
  absl::MutexLock l(&mu_);
  ++pulls_;
  std::vector<PushPullResponse> out;
  if (pull.min_version() > version_) {
    out.push_back(
        ErrorResponse(tag, absl::DeadlineExceededError(absl::StrCat(
                               "version ", version_, " has not reached ", pull.min_version()))));
    return out;
  }
  auto message = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> PullResponse* {
    PushPullResponse& r = out.emplace_back();
    r.set_tag(tag);
    r.mutable_pull()->set_version(version_);
    return r.mutable_pull();
  };
  auto dense_piece = [&](const std::string& name, int64_t begin, int64_t end)
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
    auto var = dense_.find(name);
    if (var == dense_.end()) return absl::NotFoundError(absl::StrCat("no variable ", name));
    const std::vector<float>& values = var->second.second;
    const int64_t total = static_cast<int64_t>(values.size()) * 4;
    const int64_t step = std::max<int64_t>(1, pull_chunk_bytes_ / 4);
    for (int64_t at = begin; at < end || at == begin; at += step) {
      const int64_t n = std::min(step, end - at);
      NamedTensor* t = message()->add_values();
      t->set_name(name);
      DenseTensor* d = t->mutable_dense();
      d->set_dtype(DATA_TYPE_FLOAT32);
      for (int64_t dim : var->second.first) d->mutable_shape()->add_dims(dim);
      d->set_data(reinterpret_cast<const char*>(values.data() + at), n * 4);
      if (n * 4 != total) {
        d->mutable_chunk()->set_offset(at * 4);
        d->mutable_chunk()->set_total_bytes(total);
      }
      if (n <= 0) break;
    }
    return absl::OkStatus();
  };
  for (const std::string& name : pull.names()) {
    auto var = dense_.find(name);
    const int64_t n = var == dense_.end() ? 0 : static_cast<int64_t>(var->second.second.size());
    if (absl::Status s = dense_piece(name, 0, n); !s.ok()) return {ErrorResponse(tag, s)};
  }
  for (const DenseRange& range : pull.ranges()) {
    if (absl::Status s = dense_piece(range.name(), range.offset(), range.offset() + range.count());
        !s.ok()) {
      return {ErrorResponse(tag, s)};
    }
  }
  for (const RowSelection& selection : pull.rows()) {
    auto table = tables_.find(selection.name());
    if (table == tables_.end()) {
      return {ErrorResponse(tag, absl::NotFoundError("no table " + selection.name()))};
    }
    SparseRows* rows = nullptr;
    for (int64_t id : selection.ids()) {
      if (num_shards_ > 1 && RowShard(id, num_shards_) != shard_index_) {
        return {ErrorResponse(tag, absl::InvalidArgumentError(
                                       absl::StrCat("row ", id, " belongs to another shard")))};
      }
      if (rows == nullptr) {
        NamedTensor* t = message()->add_values();
        t->set_name(selection.name());
        rows = t->mutable_rows();
        rows->set_dtype(DATA_TYPE_FLOAT32);
        rows->set_row_width(table->second.dim);
      }
      rows->add_ids(id);
      std::vector<float> row = Row(table->second, id);
      rows->mutable_values()->append(reinterpret_cast<const char*>(row.data()), row.size() * 4);
    }
  }
  if (out.empty()) message();
  out.back().mutable_pull()->set_end_of_pull(true);
  return out;
}

}  // namespace worker
}  // namespace pstrain
