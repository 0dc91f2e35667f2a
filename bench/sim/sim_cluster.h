#ifndef PSTRAIN_BENCH_SIM_SIM_CLUSTER_H_
#define PSTRAIN_BENCH_SIM_SIM_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/process/child_process.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace bench {

struct SimClusterOptions {
  // Where pstrain-coordinator and pstrain-ps are; empty: LocateBinary's
  // places (this program's runfiles).
  std::string bin_dir;
  // Logs (coordinator-0.log, ps-0.log) and ready files. Required.
  std::string run_dir;
  // The coordinator's and shard's --checkpoint_root. Required.
  std::string checkpoint_root;
  // Workers the job waits for (--num_workers): the light workers.
  int num_workers = 1;
  // The coordinator's --max_workers (ranks a shard accepts), in [1, 4096].
  int max_workers = 256;
  absl::Duration heartbeat_interval = absl::Seconds(2);
  absl::Duration heartbeat_timeout = absl::Seconds(10);
  // --records_per_lease; 0: the coordinator's own choice.
  int64_t records_per_lease = 0;
};

// A real coordinator and one real parameter server as processes on
// loopback, started as bench/cluster's LocalCluster starts them (ports
// picked at start, read from ready files), with no workers and no
// evaluator: light workers take the workers' places. Stops both when
// destroyed. Not thread-safe.
class SimCluster {
 public:
  // NotFound: a binary is missing. Otherwise the first process that did not
  // come up, with the end of its log.
  static absl::StatusOr<std::unique_ptr<SimCluster>> Start(const SimClusterOptions& options);
  ~SimCluster();

  const std::string& coordinator_address() const { return coordinator_address_; }
  const std::string& shard_address() const { return shard_address_; }
  int coordinator_pid() const;
  int shard_pid() const;

  // Submits the job; its id. The job starts once num_workers are
  // registered.
  absl::StatusOr<std::string> Submit(const std::string& spec_text);
  // The job's state and global step.
  absl::StatusOr<JobStatus> Job(const std::string& job_id);
  // OK while both processes run; otherwise which one ended and how, with
  // the end of its log.
  absl::Status CheckRunning();

  // SIGTERM to both (the shard first); OK when both exited.
  absl::Status Stop();

 private:
  SimCluster() = default;
  absl::StatusOr<std::string> StartProcess(const std::string& program, const std::string& role,
                                           std::vector<std::string> args);

  SimClusterOptions options_;
  std::vector<std::unique_ptr<ChildProcess>> processes_;  // coordinator, ps
  std::vector<std::string> logs_;
  std::string coordinator_address_;
  std::string shard_address_;
  std::unique_ptr<JobService::Stub> jobs_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_SIM_CLUSTER_H_
