#ifndef PSTRAIN_SERVER_COORDINATOR_TESTING_IN_PROCESS_COORDINATOR_H_
#define PSTRAIN_SERVER_COORDINATOR_TESTING_IN_PROCESS_COORDINATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/checkpoint/posix_env.h"
#include "common/clock/fake_clock.h"
#include "common/net/grpc_server.h"
#include "prometheus/registry.h"
#include "server/coordinator/cluster_service.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/coordinator_test_util.h"
#include "server/coordinator/job_service.h"

namespace pstrain {
namespace coordinator {

// The real Coordinator, serving its ClusterService and JobService on
// 127.0.0.1, in the test's process: for testing the members' clients
// against what they talk to in production rather than a hand-written fake.
// Its clock is a FakeClock (heartbeat deadlines pass when the test says);
// jobs are planned by FakePlanner, and its parameter servers are FakeShards
// in memory: ps/i registers with shard(i).address(). Restart() replaces it
// with a new coordinator on the same port, which has forgotten every
// member, as a restarted coordinator has; the shards stay. Not thread-safe.
class InProcessCoordinator {
 public:
  // CHECK-fails if it cannot start. checkpoint_root defaults to a folder
  // of the test's temporary directory. The parameter servers of its jobs
  // are `num_shards` FakeShards.
  explicit InProcessCoordinator(CoordinatorOptions options = {}, int num_shards = 2);
  ~InProcessCoordinator();

  InProcessCoordinator(const InProcessCoordinator&) = delete;
  InProcessCoordinator& operator=(const InProcessCoordinator&) = delete;

  // host:port, the same across Restart().
  const std::string& address() const { return address_; }
  Coordinator& coordinator() { return *coordinator_; }
  FakeClock& clock() { return clock_; }
  // The shard that ps/`index` serves, 0 <= index < num_shards.
  FakeShard& shard(int index) { return *shards_.at(index); }

  // Stops serving: calls fail Unavailable until Restart().
  void Stop();
  // Starts a new coordinator on the same port (Stop() first if serving).
  void Restart();

 private:
  void Start();

  const CoordinatorOptions options_;
  FakeClock clock_;
  PosixEnv env_;
  std::vector<std::unique_ptr<FakeShard>> shards_;
  FakePlanner planner_;
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
