// Fuzzes the coordinator's request handling: a sequence of cluster and job
// calls (request_sequence.h) on one started Coordinator, as its gRPC
// services (cluster_service.cc, job_service.cc) make them. Parameter
// servers share one in-memory FakeShard, checkpoints live in an in-memory
// filesystem, and time is a FakeClock the input may move forward. Three
// kinds of call are not requests: one moves the clock, one waits (briefly,
// in real time) for the running job to reach training, so that inputs can
// reach the calls of a running job, and one leaves a checkpoint the next
// job may resume from. Every call must end in a status and leave a
// coordinator that still answers and stops.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/manifest.h"
#include "common/checksum/crc32c.h"
#include "common/clock/fake_clock.h"
#include "glog/logging.h"
#include "protos/checkpoint.pb.h"
#include "protos/coordinator.pb.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/testing/fake_planner.h"
#include "server/coordinator/testing/fake_shard.h"
#include "common/checkpoint/memory_env.h"
#include "tests/fuzz/quiet_logs.h"
#include "tests/fuzz/request_sequence.h"

namespace pstrain {
namespace coordinator {
namespace {

// The call kinds of an input, by their first byte (modulo kNumCalls).
enum CallKind : uint8_t {
  kRegister = 0,            // RegisterRequest
  kHeartbeat = 1,           // HeartbeatRequest
  kReportProgress = 2,      // ProgressReport
  kAcquireDataLease = 3,    // AcquireDataLeaseRequest
  kCompleteDataLease = 4,   // CompleteDataLeaseRequest
  kReportEval = 5,          // EvalReport
  kWatchCheckpoints = 6,    // WatchCheckpointsRequest, polled once
  kReleaseCheckpoint = 7,   // ReleaseCheckpointRequest
  kSubmitJob = 8,           // SubmitJobRequest
  kGetJob = 9,              // GetJobRequest
  kListJobs = 10,           // ListJobsRequest
  kStopJob = 11,            // StopJobRequest
  kWatchJob = 12,           // WatchJobRequest, polled once
  kExportModel = 13,        // ExportModelRequest
  kGetAssignment = 14,      // GetAssignmentRequest, answered at once
  kAdvanceClock = 15,       // u16 milliseconds x 100
  kSettle = 16,             // wait for the running job to train or end
  kShutdown = 17,           // ShutdownRequest
  kPutCheckpoint = 18,      // CheckpointManifest, written with its shard files
  kNumCalls = 19,
};

constexpr char kCheckpointRoot[] = "/ckpt";
constexpr size_t kMaxCalls = 48;
constexpr absl::Duration kMaxSettle = absl::Milliseconds(200);

template <typename Request>
bool Parse(const fuzz::Call& call, Request* request) {
  return request->ParseFromArray(call.bytes.data(), static_cast<int>(call.bytes.size()));
}

// Polls a stream once, as a reactor's first read does, and closes it.
template <typename Message>
void PollOnce(std::shared_ptr<StreamSource<Message>> source) {
  typename StreamSource<Message>::Next next = source->Poll([] {});
  if (next.wait_id != 0) source->CancelWait(next.wait_id);
  source->Close();
}

class Session {
 public:
  Session() {
    CoordinatorOptions options;
    options.checkpoint_root = kCheckpointRoot;
    options.runner.num_ps = 1;
    options.runner.num_workers = 1;
    CHECK(CreateDirs(env_, kCheckpointRoot).ok());
    absl::StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Create(
        clock_, env_, planner_, [this](const std::string&) { return shard_.NewClient(); },
        /*metrics=*/nullptr, options);
    CHECK(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    coordinator_->Start();
  }

  ~Session() {
    coordinator_->Stop();
    // Stopped means answered: nothing may still wait for an assignment.
    CHECK_EQ(coordinator_->assignments().waiting(), 0);
  }

  void Run(const fuzz::Call& call) {
    Coordinator& c = *coordinator_;
    switch (call.kind % kNumCalls) {
      case kRegister: {
        RegisterRequest r;
        if (Parse(call, &r)) c.Register(r).IgnoreError();
        break;
      }
      case kHeartbeat: {
        HeartbeatRequest r;
        if (Parse(call, &r)) c.Heartbeat(r).IgnoreError();
        break;
      }
      case kReportProgress: {
        ProgressReport r;
        if (Parse(call, &r)) c.ReportProgress(r).IgnoreError();
        break;
      }
      case kAcquireDataLease: {
        AcquireDataLeaseRequest r;
        if (Parse(call, &r)) {
          absl::StatusOr<DataLease> lease = c.AcquireDataLease(r);
          if (lease.ok() && !lease->end_of_data()) {
            CHECK_LT(lease->range().begin(), lease->range().end()) << lease->DebugString();
          }
        }
        break;
      }
      case kCompleteDataLease: {
        CompleteDataLeaseRequest r;
        if (Parse(call, &r)) c.CompleteDataLease(r).IgnoreError();
        break;
      }
      case kReportEval: {
        EvalReport r;
        if (Parse(call, &r)) c.ReportEval(r).IgnoreError();
        break;
      }
      case kWatchCheckpoints: {
        WatchCheckpointsRequest r;
        if (!Parse(call, &r)) break;
        auto source = c.WatchCheckpoints(r);
        if (source.ok()) PollOnce(*std::move(source));
        break;
      }
      case kReleaseCheckpoint: {
        ReleaseCheckpointRequest r;
        if (Parse(call, &r)) c.ReleaseCheckpoint(r).IgnoreError();
        break;
      }
      case kSubmitJob: {
        SubmitJobRequest r;
        if (Parse(call, &r)) c.SubmitJob(r).IgnoreError();
        break;
      }
      case kGetJob: {
        GetJobRequest r;
        if (Parse(call, &r)) c.GetJob(r.job_id()).IgnoreError();
        break;
      }
      case kListJobs: {
        ListJobsRequest r;
        if (Parse(call, &r)) c.ListJobs(r).IgnoreError();
        break;
      }
      case kStopJob: {
        StopJobRequest r;
        if (Parse(call, &r)) c.StopJob(r).IgnoreError();
        break;
      }
      case kWatchJob: {
        WatchJobRequest r;
        if (!Parse(call, &r) || r.job_id().empty()) break;  // as JobServiceImpl
        auto source = c.WatchJob(r);
        if (source.ok()) PollOnce(*std::move(source));
        break;
      }
      case kExportModel: {
        ExportModelRequest r;
        if (Parse(call, &r)) c.ExportModel(r).IgnoreError();
        break;
      }
      case kGetAssignment: {
        GetAssignmentRequest r;
        if (!Parse(call, &r)) break;
        if (!c.CheckCaller(r.task(), r.incarnation()).ok()) break;
        const Assignment assignment = c.assignments().Get(r.task());
        if (!assignment.job_id().empty()) {
          c.AssignmentDelivered(r.task(), r.incarnation(), assignment);
        }
        break;
      }
      case kAdvanceClock: {
        uint16_t hundreds_of_ms = 0;
        std::memcpy(&hundreds_of_ms, call.bytes.data(), std::min<size_t>(2, call.bytes.size()));
        clock_.Advance(absl::Milliseconds(100) * hundreds_of_ms);
        break;
      }
      case kSettle:
        Settle();
        break;
      case kPutCheckpoint: {
        CheckpointManifest manifest;
        if (Parse(call, &manifest)) PutCheckpoint(manifest);
        break;
      }
      default: {
        ShutdownRequest r;
        if (Parse(call, &r)) c.Shutdown(r).IgnoreError();
        break;
      }
    }
    // Whatever happened, the coordinator still answers.
    coordinator_->GetCluster();
  }

 private:
  // Waits until the running job hands worker 0 its assignment, or no job
  // runs, or kMaxSettle passes.
  void Settle() {
    TaskId worker;
    worker.set_type(TASK_TYPE_WORKER);
    worker.set_index(0);
    const absl::Time give_up = absl::Now() + kMaxSettle;
    while (absl::Now() < give_up) {
      std::shared_ptr<JobRunner> runner = coordinator_->running();
      if (runner == nullptr) return;
      if (coordinator_->assignments().Get(worker).job_id() == runner->job_id()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Writes `manifest` as a checkpoint of the model_dir its spec names
  // (under the root; "/ckpt/fuzz" when it names none), with shard files of
  // the sizes and CRC32Cs it is made to list, as a job that ran before left
  // it: what a resume reads.
  void PutCheckpoint(CheckpointManifest manifest) {
    std::string model_dir = manifest.spec().checkpoint().model_dir();
    if (model_dir.empty() || model_dir.front() != '/') {
      model_dir = JoinPath(kCheckpointRoot, model_dir.empty() ? "fuzz" : model_dir);
    }
    if (!absl::StartsWith(model_dir, absl::StrCat(kCheckpointRoot, "/"))) return;
    const std::string dir = JoinPath(model_dir, CheckpointDirName(manifest.global_step()));
    if (manifest.shards_size() > 4) return;
    for (CheckpointShardFile& shard : *manifest.mutable_shards()) {
      if (!IsPlainFileName(shard.name())) return;
      const std::string contents = absl::StrCat("snapshot of ", shard.name());
      env_.PutFile(JoinPath(dir, shard.name()), contents);
      shard.set_bytes(static_cast<int64_t>(contents.size()));
      shard.set_crc32c(Crc32c(contents));
    }
    if (!CreateDirs(env_, dir).ok()) return;
    WriteManifest(env_, dir, manifest).IgnoreError();
  }

  FakeClock clock_;
  MemoryEnv env_;
  // Every parameter server the input registers, whatever its address.
  FakeShard shard_{env_, "ps.fuzz:1"};
  FakePlanner planner_{/*num_records=*/1000};
  std::unique_ptr<Coordinator> coordinator_;
};

}  // namespace
}  // namespace coordinator
}  // namespace pstrain

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  pstrain::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::coordinator::Session session;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  for (const pstrain::fuzz::Call& call :
       pstrain::fuzz::SplitCalls(input, pstrain::coordinator::kMaxCalls)) {
    session.Run(call);
  }
  return 0;
}
