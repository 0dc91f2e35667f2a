#include "server/coordinator/testing/fake_shard.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"

namespace pstrain {
namespace coordinator {
namespace {

// The largest shard file a Restore reads.
constexpr int64_t kMaxShardFileBytes = int64_t{64} << 20;

// A status of the call `method`, named as GrpcShardClient names it.
absl::Status OfMethod(const char* method, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(method, ": ", status.message()));
}

absl::Status WriteWholeFile(Env& env, const std::string& path, absl::string_view contents) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = env.NewWritableFile(path);
  if (!file.ok()) return file.status();
  if (absl::Status appended = (*file)->Append(contents); !appended.ok()) return appended;
  return (*file)->Close();
}

// The client of a shard at an address no FakeShard has.
class UnreachableShardClient final : public ShardClient {
 public:
  explicit UnreachableShardClient(std::string address) : address_(std::move(address)) {}

  absl::StatusOr<CreateVariablesResponse> CreateVariables(const CreateVariablesRequest&) override {
    return Unreachable("CreateVariables");
  }
  absl::Status DropJob(const DropJobRequest&) override { return Unreachable("DropJob"); }
  absl::StatusOr<SnapshotResponse> Snapshot(const SnapshotRequest&) override {
    return Unreachable("Snapshot");
  }
  absl::StatusOr<RestoreResponse> Restore(const RestoreRequest&) override {
    return Unreachable("Restore");
  }
  absl::StatusOr<PushLedger> ReadPushLedger(const ReadPushLedgerRequest&) override {
    return Unreachable("ReadPushLedger");
  }
  absl::StatusOr<CommitRoundResponse> CommitRound(const CommitRoundRequest&) override {
    return Unreachable("CommitRound");
  }
  void Cancel() override {}

 private:
  absl::Status Unreachable(const char* method) const {
    return absl::UnavailableError(absl::StrCat(method, ": no shard serves at ", address_));
  }

  const std::string address_;
};

}  // namespace

class FakeShard::Client final : public ShardClient {
 public:
  explicit Client(FakeShard& shard) : shard_(shard) {}

  absl::StatusOr<CreateVariablesResponse> CreateVariables(
      const CreateVariablesRequest& request) override {
    return Answer("CreateVariables", [&] { return shard_.CreateVariables(request); });
  }
  absl::Status DropJob(const DropJobRequest& request) override {
    if (cancelled()) return Cancelled("DropJob");
    return OfMethod("DropJob", shard_.DropJob(request));
  }
  absl::StatusOr<SnapshotResponse> Snapshot(const SnapshotRequest& request) override {
    return Answer("Snapshot", [&] { return shard_.Snapshot(request); });
  }
  absl::StatusOr<RestoreResponse> Restore(const RestoreRequest& request) override {
    return Answer("Restore", [&] { return shard_.Restore(request); });
  }
  absl::StatusOr<PushLedger> ReadPushLedger(const ReadPushLedgerRequest& request) override {
    return Answer("ReadPushLedger", [&] { return shard_.ReadPushLedger(request); });
  }
  absl::StatusOr<CommitRoundResponse> CommitRound(const CommitRoundRequest& request) override {
    return Answer("CommitRound", [&] { return shard_.CommitRound(request); });
  }
  void Cancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
  }

 private:
  template <typename Call>
  auto Answer(const char* method, const Call& call) -> decltype(call()) {
    if (cancelled()) return Cancelled(method);
    auto answer = call();
    if (!answer.ok()) return OfMethod(method, answer.status());
    return answer;
  }

  static absl::Status Cancelled(const char* method) {
    return absl::CancelledError(
        absl::StrCat(method, ": cancelled, the coordinator is shutting down"));
  }

  bool cancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }

  FakeShard& shard_;
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

FakeShard::FakeShard(Env& env, std::string address) : env_(env), address_(std::move(address)) {}

std::unique_ptr<ShardClient> FakeShard::NewClient() { return std::make_unique<Client>(*this); }

std::vector<CreateVariablesRequest> FakeShard::created() const {
  absl::MutexLock lock(&mu_);
  return created_;
}

std::vector<std::string> FakeShard::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

std::vector<RestoreRequest> FakeShard::restored() const {
  absl::MutexLock lock(&mu_);
  return restored_;
}

int FakeShard::snapshots() const {
  absl::MutexLock lock(&mu_);
  return snapshots_;
}

void FakeShard::SetLedger(PushLedger ledger) {
  absl::MutexLock lock(&mu_);
  ledger_ = std::move(ledger);
}

std::vector<ReadPushLedgerRequest> FakeShard::ledger_reads() const {
  absl::MutexLock lock(&mu_);
  return ledger_reads_;
}

bool FakeShard::WaitForLedgerReads(size_t count, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ledger_reads_.size() >= count; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

void FakeShard::SetSnapshotContents(SnapshotContents contents) {
  absl::MutexLock lock(&mu_);
  snapshot_contents_ = std::move(contents);
}

std::vector<CommitRoundRequest> FakeShard::commits() const {
  absl::MutexLock lock(&mu_);
  return commits_;
}

void FakeShard::FailCommits(absl::Status failure, int times) {
  absl::MutexLock lock(&mu_);
  commit_failure_ = std::move(failure);
  commit_failures_left_ = times;
}

bool FakeShard::WaitForCommits(size_t count, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return commits_.size() >= count; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

void FakeShard::OnCommit(std::function<void(const CommitRoundRequest& request)> hook) {
  absl::MutexLock lock(&mu_);
  commit_hook_ = std::move(hook);
}

void FakeShard::SetUpdatesSinceReported(int64_t updates) {
  absl::MutexLock lock(&mu_);
  updates_since_reported_ = updates;
}

absl::StatusOr<CreateVariablesResponse> FakeShard::CreateVariables(
    const CreateVariablesRequest& request) {
  absl::MutexLock lock(&mu_);
  created_.push_back(request);
  return CreateVariablesResponse();
}

absl::Status FakeShard::DropJob(const DropJobRequest& request) {
  absl::MutexLock lock(&mu_);
  dropped_.push_back(request.job_id());
  return absl::OkStatus();
}

absl::StatusOr<SnapshotResponse> FakeShard::Snapshot(const SnapshotRequest& request) {
  SnapshotContents contents_of;
  {
    absl::MutexLock lock(&mu_);
    contents_of = snapshot_contents_;
  }
  absl::StatusOr<std::string> contents =
      contents_of
          ? contents_of(request)
          : absl::StrCat("shard of ", request.job_id(), " at step ", request.global_step(), "\n");
  if (!contents.ok()) return contents.status();
  if (absl::Status written = WriteWholeFile(env_, request.path(), *contents); !written.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot write ", request.path(), ": ", written.message()));
  }
  SnapshotResponse response;
  response.set_path(request.path());
  response.set_bytes(static_cast<int64_t>(contents->size()));
  response.set_crc32c(Crc32c(*contents));
  absl::MutexLock lock(&mu_);
  response.set_version(request.global_step() + updates_since_reported_);
  *response.mutable_ledger() = ledger_;
  ++snapshots_;
  return response;
}

absl::StatusOr<RestoreResponse> FakeShard::Restore(const RestoreRequest& request) {
  absl::StatusOr<std::string> contents = ReadWholeFile(env_, request.path(), kMaxShardFileBytes);
  if (!contents.ok()) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", request.path(), ": ", contents.status().message()));
  }
  if (static_cast<int64_t>(contents->size()) != request.expected_bytes() ||
      Crc32c(*contents) != request.expected_crc32c()) {
    return absl::DataLossError(absl::StrCat(request.path(), " differs from its MANIFEST"));
  }
  absl::MutexLock lock(&mu_);
  restored_.push_back(request);
  return RestoreResponse();
}

absl::StatusOr<PushLedger> FakeShard::ReadPushLedger(const ReadPushLedgerRequest& request) {
  absl::MutexLock lock(&mu_);
  ledger_reads_.push_back(request);
  return ledger_;
}

absl::StatusOr<CommitRoundResponse> FakeShard::CommitRound(const CommitRoundRequest& request) {
  std::function<void(const CommitRoundRequest& request)> hook;
  {
    absl::MutexLock lock(&mu_);
    commits_.push_back(request);
    hook = commit_hook_;
  }
  if (hook) hook(request);
  absl::MutexLock lock(&mu_);
  if (!commit_failure_.ok() && commit_failures_left_ != 0) {
    if (commit_failures_left_ > 0) --commit_failures_left_;
    return commit_failure_;
  }
  CommitRoundResponse response;
  response.set_version(request.round() + 1);
  return response;
}

ShardClientFactory FakeShardClients(std::vector<FakeShard*> shards) {
  std::map<std::string, FakeShard*> by_address;
  for (FakeShard* shard : shards) by_address[shard->address()] = shard;
  return [by_address](const std::string& address) -> std::unique_ptr<ShardClient> {
    auto found = by_address.find(address);
    if (found == by_address.end()) return std::make_unique<UnreachableShardClient>(address);
    return found->second->NewClient();
  };
}

std::shared_ptr<ShardGroup> FakeShardGroup(std::vector<FakeShard*> shards) {
  std::vector<ShardGroup::Shard> group;
  for (size_t i = 0; i < shards.size(); ++i) {
    ShardGroup::Shard shard;
    shard.task.set_type(TASK_TYPE_PS);
    shard.task.set_index(static_cast<int>(i));
    shard.address = shards[i]->address();
    shard.client = shards[i]->NewClient();
    group.push_back(std::move(shard));
  }
  return std::make_shared<ShardGroup>(std::move(group));
}

}  // namespace coordinator
}  // namespace pstrain
