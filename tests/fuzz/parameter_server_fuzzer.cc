// Fuzzes the parameter server's request handling: a sequence of requests
// (request_sequence.h) run against one ShardStore as the gRPC service runs
// them (parameter_server_service.cc): CreateVariables, DropJob, the
// messages of one PushPull stream (pushes reassembled by tag through the
// PushAssembler, pulls validated and read chunk by chunk), unary Pull,
// Snapshot and Restore, the last two on an in-memory filesystem. A call
// kind also drops a file of the input's bytes (checksums made right) where
// a Restore can find it; another snapshots the job and restores it. Every
// request must end in a status or an answer, a refused push must say why,
// a shard's own snapshot must restore to the same values, and nothing may
// crash, hang or allocate without bound.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/clock/fake_clock.h"
#include "glog/logging.h"
#include "prometheus/registry.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/pull_reader.h"
#include "server/ps/push_assembler.h"
#include "server/ps/shard_store.h"
#include "tests/fuzz/checksum_fixup.h"
#include "common/checkpoint/memory_env.h"
#include "tests/fuzz/request_sequence.h"
#include "tests/fuzz/quiet_logs.h"

namespace pstrain {
namespace {

// The call kinds of an input, by their first byte (modulo kNumCalls).
enum CallKind : uint8_t {
  kCreateVariables = 0,  // CreateVariablesRequest
  kDropJob = 1,          // DropJobRequest
  kStream = 2,           // PushPullRequest on the one stream
  kPull = 3,             // PullRequest (unary)
  kSnapshot = 4,         // SnapshotRequest
  kRestore = 5,          // RestoreRequest
  kPutFile = 6,          // raw bytes: kFuzzFile, record checksums made right
  kEndStream = 7,        // the stream ends: unfinished parts are abandoned
  kRoundTrip = 8,        // (no bytes) snapshot the job, restore it, compare
  kNumCalls = 9,
};

constexpr char kCheckpointRoot[] = "/ckpt";
constexpr char kFuzzFile[] = "/ckpt/fuzz/shard-0-of-1";
constexpr size_t kMaxCalls = 64;
// As the service's defaults, smaller so an input reads in few chunks.
constexpr int64_t kChunkBytes = 4096;
constexpr int64_t kMaxUnaryPullBytes = 15 << 20;

void CheckPushResult(const PushResult& result) {
  CHECK_NE(result.outcome(), PUSH_OUTCOME_UNSPECIFIED);
  if (result.outcome() == PUSH_OUTCOME_REJECTED) {
    CHECK_NE(result.status().code(), 0) << "a push was refused without a reason";
  }
}

// Reads a validated pull the way the stream does, message by message.
void ReadAll(std::shared_ptr<ParameterShard> shard, const PullRequest& pull) {
  PullCursor cursor(std::move(shard), pull, kChunkBytes);
  PullResponse message;
  int messages = 0;
  while (!cursor.done()) {
    if (!cursor.Next(&message).ok()) break;
    CHECK_LE(++messages, 1 << 20) << "a pull that does not end";
  }
}

class Session {
 public:
  Session() : store_(Options(&env_), clock_, registry_) {}

  ~Session() { EndStream(); }

  void Run(const fuzz::Call& call) {
    switch (call.kind % kNumCalls) {
      case kCreateVariables: {
        CreateVariablesRequest request;
        if (request.ParseFromArray(call.bytes.data(), static_cast<int>(call.bytes.size()))) {
          store_.CreateVariables(request).IgnoreError();
        }
        break;
      }
      case kDropJob: {
        DropJobRequest request;
        if (request.ParseFromArray(call.bytes.data(), static_cast<int>(call.bytes.size()))) {
          store_.DropJob(request).IgnoreError();
        }
        break;
      }
      case kStream: {
        PushPullRequest request;
        if (request.ParseFromArray(call.bytes.data(), static_cast<int>(call.bytes.size()))) {
          if (request.has_push()) HandlePush(request.tag(), *request.mutable_push());
          if (request.has_pull()) HandlePull(request.pull(), kChunkBytes);
        }
        break;
      }
      case kPull: {
        PullRequest request;
        if (request.ParseFromArray(call.bytes.data(), static_cast<int>(call.bytes.size()))) {
          HandlePull(request, kMaxUnaryPullBytes);
        }
        break;
      }
      case kSnapshot: {
        SnapshotRequest request;
        if (request.ParseFromArray(call.bytes.data(), static_cast<int>(call.bytes.size()))) {
          store_.Snapshot(request).IgnoreError();
        }
        break;
      }
      case kRestore: {
        RestoreRequest request;
        if (request.ParseFromArray(call.bytes.data(), static_cast<int>(call.bytes.size()))) {
          store_.Restore(request).IgnoreError();
        }
        break;
      }
      case kPutFile:
        env_.PutFile(kFuzzFile, fuzz::WithRecordChecksums(call.bytes));
        break;
      case kEndStream:
        EndStream();
        break;
      default:
        RoundTrip();
        break;
    }
  }

 private:
  static ShardStoreOptions Options(Env* env) {
    ShardStoreOptions options;
    options.checkpoint_root = kCheckpointRoot;
    options.env = env;
    // As a shard started with --max_variable_mb=64: the default (3/4 of the
    // machine's memory) would let one input hold gigabytes legitimately.
    options.shard.max_variable_bytes = int64_t{64} << 20;
    options.pushes.max_pending_bytes = int64_t{64} << 20;
    return options;
  }

  // As PushPullReactor::HandlePush.
  void HandlePush(uint64_t tag, PushRequest& push) {
    auto it = parts_.find(tag);
    if (it != parts_.end() && !it->second->Matches(push)) {
      parts_.erase(it);
      it = parts_.end();
    }
    if (it == parts_.end()) {
      it = parts_.emplace(tag, store_.pushes().StartPart(store_.GetJob(push.job_id()), push))
               .first;
    }
    PushPart::Step step = it->second->Add(push);
    if (step.finished) parts_.erase(it);
    if (step.reply.has_value()) CheckPushResult(*step.reply);
  }

  // As PushPullReactor::HandlePull and PullReactor, without the wait for a
  // version the shard has not reached.
  void HandlePull(const PullRequest& pull, int64_t max_bytes) {
    absl::StatusOr<std::shared_ptr<ParameterShard>> shard = store_.GetJob(pull.job_id());
    if (!shard.ok()) return;
    absl::StatusOr<int64_t> bytes = ValidatePull(**shard, pull);
    if (!bytes.ok() || pull.min_version() > (*shard)->version()) return;
    CHECK_GE(*bytes, 0);
    if (max_bytes == kMaxUnaryPullBytes) {
      if (*bytes > max_bytes) return;
      absl::StatusOr<std::vector<PullResponse>> answer = ReadPull(*shard, pull, max_bytes);
      CHECK(answer.ok()) << "a validated pull failed: " << answer.status();
      CHECK(!answer->empty());
      return;
    }
    ReadAll(*shard, pull);
  }

  // A restore of the snapshot just taken must succeed and give back the
  // same version and dense values, bit for bit.
  void RoundTrip() {
    std::shared_ptr<ParameterShard> shard = store_.current_job();
    if (shard == nullptr) return;
    SnapshotRequest snapshot;
    snapshot.set_job_id(shard->job_id());
    snapshot.set_path("round-trip/shard");
    absl::StatusOr<SnapshotResponse> written = store_.Snapshot(snapshot);
    CHECK(written.ok()) << written.status();
    const std::vector<std::vector<float>> before = DenseValues(*shard);
    RestoreRequest restore;
    restore.set_job_id(shard->job_id());
    restore.set_path(snapshot.path());
    restore.set_expected_bytes(written->bytes());
    restore.set_expected_crc32c(written->crc32c());
    absl::StatusOr<RestoreResponse> restored = store_.Restore(restore);
    CHECK(restored.ok()) << "a shard's own snapshot does not restore: " << restored.status();
    CHECK_EQ(restored->version(), written->version());
    const std::vector<std::vector<float>> after = DenseValues(*shard);
    CHECK(before.size() == after.size());
    for (size_t v = 0; v < before.size(); ++v) {
      CHECK(before[v].size() == after[v].size());
      if (before[v].empty()) continue;  // a table
      CHECK(std::memcmp(before[v].data(), after[v].data(), 4 * before[v].size()) == 0)
          << "variable " << shard->variable(static_cast<int>(v)).spec.name()
          << " changed in a snapshot and restore";
    }
  }

  static std::vector<std::vector<float>> DenseValues(const ParameterShard& shard) {
    std::vector<std::vector<float>> values(shard.num_variables());
    for (int v = 0; v < shard.num_variables(); ++v) {
      if (shard.variable(v).embedding) continue;
      values[v].resize(static_cast<size_t>(shard.variable(v).num_elements));
      CHECK(shard.ReadDense(v, 0, absl::MakeSpan(values[v])).ok());
    }
    return values;
  }

  void EndStream() {
    for (auto& [tag, part] : parts_) part->Abandon();
    parts_.clear();
  }

  MemoryEnv env_;
  FakeClock clock_;
  prometheus::Registry registry_;
  ShardStore store_;
  // The stream's unfinished push parts by tag.
  std::map<uint64_t, std::unique_ptr<PushPart>> parts_;
};

}  // namespace
}  // namespace pstrain

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  pstrain::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::Session session;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  for (const pstrain::fuzz::Call& call : pstrain::fuzz::SplitCalls(input, pstrain::kMaxCalls)) {
    session.Run(call);
  }
  return 0;
}
