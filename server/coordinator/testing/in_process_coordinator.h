#ifndef PSTRAIN_SERVER_COORDINATOR_TESTING_IN_PROCESS_COORDINATOR_H_
#define PSTRAIN_SERVER_COORDINATOR_TESTING_IN_PROCESS_COORDINATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/posix_env.h"
#include "common/clock/clock.h"
#include "common/clock/fake_clock.h"
#include "common/net/grpc_server.h"
#include "prometheus/registry.h"
#include "server/coordinator/cluster_service.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/job_planner.h"
#include "server/coordinator/job_service.h"
#include "server/coordinator/testing/fake_planner.h"
#include "server/coordinator/testing/fake_shard.h"

namespace pstrain {
namespace coordinator {

// The real Coordinator, serving its ClusterService and JobService on
// 127.0.0.1, in the test's process: for testing the members' clients
// against what they talk to in production rather than a hand-written fake.
// Its clock is a FakeClock (heartbeat deadlines pass when the test says);
// jobs are planned by FakePlanner unless the test asks for the real planner
// (Planning::kFromSpec), and its parameter servers are FakeShards in
// memory (ps/i registers with shard(i).address()), unless the test gives
// the addresses of real ones (server/ps/testing/wired_shard.h).
// Restart() replaces it with a new coordinator on the same port, which has forgotten every
// member, as a restarted coordinator has; the shards stay. Not thread-safe.
class InProcessCoordinator {
 public:
  // What a test may change about the fakes the coordinator runs on.
  struct Fakes {
    // The parameter servers of its jobs: FakeShards ps/0 .. ps/<n - 1>.
    int num_shards = 2;
    // The records FakePlanner plans every job with.
    int64_t num_records = 10000;
    // The filesystem of the coordinator and its FakeShards, borrowed (a
    // TestEnv that fails writes on the test's command); nullptr: the real
    // one.
    Env* env = nullptr;
    // Called once a ShutdownCluster request has been carried out.
    std::function<void(int exit_code)> on_shutdown;
  };

  // CHECK-fails if it cannot start. checkpoint_root defaults to a folder
  // of the test's temporary directory. The parameter servers of its jobs
  // are `num_shards` FakeShards.
  explicit InProcessCoordinator(CoordinatorOptions options = {}, int num_shards = 2);
  InProcessCoordinator(CoordinatorOptions options, Fakes fakes);
  // How jobs are planned: kFake by FakePlanner (the same variables and
  // records whatever the spec says); kFromSpec by the real system's
  // ModelJobPlanner (the variables of the spec's model, the records of its
  // data), for members that train the job.
  enum class Planning { kFake, kFromSpec };
  // With real parameter servers, found at the addresses they register
  // with: the coordinator's own calls to them (create, snapshot, drop,
  // ledger reads) go over gRPC, as in production. There is no shard(i).
  InProcessCoordinator(CoordinatorOptions options, Planning planning);
  ~InProcessCoordinator();

  InProcessCoordinator(const InProcessCoordinator&) = delete;
  InProcessCoordinator& operator=(const InProcessCoordinator&) = delete;

  // host:port, the same across Restart().
  const std::string& address() const { return address_; }
  Coordinator& coordinator() { return *coordinator_; }
  FakeClock& clock() { return clock_; }
  // The filesystem the coordinator and its FakeShards write to.
  Env& env() { return env_; }
  // Where the coordinator's metrics are registered.
  prometheus::Registry& registry() { return registry_; }
  // The shard that ps/`index` serves, 0 <= index < num_shards (FakeShards
  // only).
  FakeShard& shard(int index) { return *shards_.at(index); }

  // ps/0 .. ps/<num_shards - 1> register (incarnation 1) with their
  // FakeShards' addresses, as a job's parameter servers do; the first
  // refusal otherwise (FakeShards only).
  absl::Status RegisterShards();

  // A training job of a logistic regression on synthetic clicks.
  struct TrainingJob {
    // Where its checkpoints go; required.
    std::string model_dir;
    int64_t num_examples = 10000;
    int64_t max_steps = 100000;
  };
  // Submits `job` and registers its parameter servers (RegisterShards): it
  // starts once its workers register. The job's id, or the first refusal.
  absl::StatusOr<std::string> SubmitTrainingJob(const TrainingJob& job);

  // Long-polls the assignment of `task` (registered as `incarnation`) over
  // the coordinator's gRPC service for up to `wait` of real time: the
  // assignment its job hands out, or an empty one when it handed none out
  // meanwhile. The status of the call otherwise.
  absl::StatusOr<Assignment> AwaitAssignment(const TaskId& task, uint64_t incarnation,
                                             absl::Duration wait);

  // The assignment the coordinator's board holds for `task` once it names
  // a job, waiting up to `wait` of real time. Unlike AwaitAssignment, no
  // delivery to the task is recorded, as a GetAssignment call records one.
  // DeadlineExceeded when the board named no job by then.
  absl::StatusOr<Assignment> AwaitBoardAssignment(const TaskId& task, absl::Duration wait);

  // Stops serving: calls fail Unavailable until Restart().
  void Stop();
  // Starts a new coordinator on the same port (Stop() first if serving).
  void Restart();

 private:
  void Start();

  const CoordinatorOptions options_;
  FakeClock clock_;
  PosixEnv posix_;
  Env& env_;
  const std::function<void(int exit_code)> on_shutdown_;
  // Empty when the parameter servers are real: then the coordinator reaches
  // them over gRPC, its retries on real time.
  std::vector<std::unique_ptr<FakeShard>> shards_;
  RealClock shard_clock_;
  const std::unique_ptr<JobPlanner> planner_;
  prometheus::Registry registry_;
  CoordinatorMetrics metrics_{registry_};
  std::string address_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<ClusterServiceImpl> cluster_service_;
  std::unique_ptr<JobServiceImpl> job_service_;
  std::unique_ptr<GrpcServer> server_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TESTING_IN_PROCESS_COORDINATOR_H_
