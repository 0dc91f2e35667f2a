#ifndef PSTRAIN_BENCH_SIM_LIGHT_WORKER_H_
#define PSTRAIN_BENCH_SIM_LIGHT_WORKER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/sim/call_tally.h"
#include "bench/sim/push_pull_stream.h"
#include "bench/sim/shard_tensors.h"
#include "protos/coordinator.grpc.pb.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace bench {

// How every light worker of a fleet behaves.
struct LightWorkerOptions {
  // Deadline of each coordinator call. Default 10 s, as MemberSession's.
  absl::Duration call_timeout = absl::Seconds(10);
  // Records a step trains (DataLease records consumed per step). Default 64.
  int batch_size = 64;
  // A progress report every this many steps. Default 10.
  int steps_per_report = 10;
  // Push and pull on shard 0 at each step: dense variables, table rows.
  // Both false: a step only counts records (the coordinator alone).
  bool push_dense = true;
  bool push_sparse = true;
  // Rows per table per step.
  int rows = 64;
};

// What a light worker has done so far; for the end-to-end checks.
struct LightWorkerState {
  bool registered = false;
  std::string job_id;
  int64_t steps = 0;
  int64_t applied_pushes = 0;
  int64_t completed_leases = 0;
};

// One simulated worker: speaks ClusterService (Register, Heartbeat,
// GetAssignment, AcquireDataLease, CompleteDataLease, ReportProgress) as
// pstrain-worker does, and pushes and pulls on shard 0 over a PushPull
// stream, computing nothing. It owns no thread: a driver calls
// OnHeartbeatDue and OnStepDue when they are due, and every call goes out
// on gRPC's callback API, its answer driving the next call. A heartbeat or
// step still unanswered when the next is due is not doubled (counted as an
// overlap). Thread-safe.
class LightWorker {
 public:
  // `coordinator`, `shard`, `tally` and `in_flight` are borrowed and must
  // outlive every call (see WorkerFleet::Stop). `in_flight` counts calls
  // whose answers are still to come.
  LightWorker(int index, uint64_t incarnation, const LightWorkerOptions& options,
              ClusterService::Stub& coordinator, ParameterServer::Stub& shard, CallTally& tally,
              std::atomic<int64_t>& in_flight);

  LightWorker(const LightWorker&) = delete;
  LightWorker& operator=(const LightWorker&) = delete;

  void OnHeartbeatDue();
  void OnStepDue();
  // Closes its PushPull stream; calls after it only count.
  void Close();

  LightWorkerState state() const;
  // The assignment it took (empty job_id before one), less its spec and
  // placements.
  Assignment assignment() const;
  // What it pushes and pulls: its job, run and shard 0's variables (shapes
  // known once a pull has answered).
  ShardTraffic traffic() const;

 private:
  template <typename Request, typename Response>
  struct UnaryCall;

  // Sends one ClusterService call; `then` runs on a gRPC thread with the
  // status and the response.
  // `start` issues the call on the stub's async() interface.
  template <typename Request, typename Response, typename Start, typename Then>
  void Send(SimCall kind, Start start, Request request, Then then);

  TaskId Task() const;
  void Register();
  void Heartbeat(const std::string& job_id, int64_t step);
  void FetchAssignment();
  void AcquireLease();
  void CompleteLease(int64_t lease_id);
  void ReportProgress(int64_t steps, int64_t examples, int64_t version);
  void Pull();
  void Push();
  // A step's end: records, reports, the lease's end.
  void EndStep(bool pushed);

  // Constant after construction.
  const int index_;
  const uint64_t incarnation_;
  const uint64_t push_incarnation_;
  const LightWorkerOptions options_;
  ClusterService::Stub& coordinator_;
  ParameterServer::Stub& shard_;
  CallTally& tally_;
  std::atomic<int64_t>& in_flight_;

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  bool registering_ ABSL_GUARDED_BY(mu_) = false;
  bool beating_ ABSL_GUARDED_BY(mu_) = false;
  bool assigning_ ABSL_GUARDED_BY(mu_) = false;
  Assignment assignment_ ABSL_GUARDED_BY(mu_);
  // The data lease: 0 when none; leasing_ while one is asked for or
  // completed.
  int64_t lease_id_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t lease_records_left_ ABSL_GUARDED_BY(mu_) = 0;
  bool leasing_ ABSL_GUARDED_BY(mu_) = false;
  bool end_of_data_ ABSL_GUARDED_BY(mu_) = false;
  bool first_lease_skewed_ ABSL_GUARDED_BY(mu_) = false;
  // The step in flight and what the next progress report carries.
  bool stepping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t steps_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t unreported_steps_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t applied_pushes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t completed_leases_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t push_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  ShardTraffic traffic_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<PushPullStream> stream_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_LIGHT_WORKER_H_
