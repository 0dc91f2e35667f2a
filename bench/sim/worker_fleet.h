#ifndef PSTRAIN_BENCH_SIM_WORKER_FLEET_H_
#define PSTRAIN_BENCH_SIM_WORKER_FLEET_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/sim/call_tally.h"
#include "bench/sim/light_worker.h"
#include "bench/sim/member_schedule.h"
#include "grpcpp/grpcpp.h"
#include "protos/coordinator.grpc.pb.h"
#include "protos/parameter_server.grpc.pb.h"

namespace pstrain {
namespace bench {

struct WorkerFleetOptions {
  // The coordinator's and shard 0's gRPC addresses. Required.
  std::string coordinator_address;
  std::string shard_address;
  // Light workers worker/first_index .. worker/first_index + members - 1.
  int members = 100;
  int first_index = 0;
  // The coordinator's --heartbeat_interval_secs. The first heartbeats
  // (registrations) are spread over one interval.
  absl::Duration heartbeat_interval = absl::Seconds(2);
  // A step every this long per worker, spread likewise.
  absl::Duration step_interval = absl::Seconds(1);
  // Connections to each server; the members share them round-robin, as
  // many processes' connections would spread over the server's threads.
  // Default 8.
  int channels = 8;
  // Threads that pop due events; the calls themselves run on gRPC's
  // callback threads. Default 1.
  int driver_threads = 1;
  LightWorkerOptions worker;
};

// Many light workers in this process, driven by one timer heap
// (MemberSchedule) and a few driver threads rather than a thread each.
// Thread-safe.
class WorkerFleet {
 public:
  // Opens the channels and starts the drivers; the workers register at
  // their first heartbeat. InvalidArgument: no members, channels or
  // drivers, or a period that is not positive.
  static absl::StatusOr<std::unique_ptr<WorkerFleet>> Start(const WorkerFleetOptions& options);

  WorkerFleet(const WorkerFleet&) = delete;
  WorkerFleet& operator=(const WorkerFleet&) = delete;
  // Stop().
  ~WorkerFleet();

  CallTally& tally() { return tally_; }
  int size() const { return static_cast<int>(workers_.size()); }
  const LightWorker& worker(int i) const { return *workers_[i]; }
  // Workers registered, and those with an assignment.
  int Registered() const;
  int Assigned() const;
  // Occurrences the drivers skipped for running a period late.
  int64_t SkippedEvents() const;

  // Ends the drivers, closes every stream and waits up to `drain` for the
  // calls in flight to be answered (each has a deadline). Idempotent.
  void Stop(absl::Duration drain = absl::Seconds(15));

 private:
  WorkerFleet() = default;
  void Drive();

  WorkerFleetOptions options_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::vector<std::unique_ptr<ClusterService::Stub>> coordinator_stubs_;
  std::vector<std::unique_ptr<ParameterServer::Stub>> shard_stubs_;
  CallTally tally_;
  std::atomic<int64_t> in_flight_{0};
  std::vector<std::unique_ptr<LightWorker>> workers_;
  std::vector<std::thread> drivers_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  MemberSchedule schedule_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_WORKER_FLEET_H_
