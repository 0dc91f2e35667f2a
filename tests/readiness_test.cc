// Readiness follows membership, as Kubernetes' readiness probes see it
// (the health service "readiness"): a parameter server, worker or
// evaluator is ready while the coordinator answers its heartbeats, and not
// while it cannot reach it, though it stays alive (the whole server's
// health, what liveness probes ask) and becomes ready again once the
// coordinator is back.

#include <csignal>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/net/grpc_server.h"
#include "common/net/health_client.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"

namespace pstrain {
namespace {

using testing_cluster::ClusterTest;

constexpr char kCoordinator[] = "coordinator/0";

class ReadinessTest : public ClusterTest {
 protected:
  ReadinessTest() : ClusterTest(1, 1) {}

  // The members' gRPC addresses (every task but the coordinator).
  std::vector<LocalTask> Members() {
    std::vector<LocalTask> members;
    for (const LocalTask& task : cluster_->cluster().tasks()) {
      if (task.role != "coordinator") members.push_back(task);
    }
    return members;
  }

  // Polls `task`'s readiness until it is `ready`; false after `timeout`.
  static bool AwaitReadiness(const LocalTask& task, bool ready, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    do {
      const bool serving = CheckHealth(task.grpc_address, absl::Seconds(1), kReadinessService).ok();
      if (serving == ready) return true;
      absl::SleepFor(absl::Milliseconds(100));
    } while (absl::Now() < deadline);
    return false;
  }
};

TEST_F(ReadinessTest, MembersAreReadyWhileTheCoordinatorAnswersThem) {
  const std::vector<LocalTask> members = Members();
  ASSERT_EQ(members.size(), 3u) << "ps, worker, evaluator";
  for (const LocalTask& task : members) {
    EXPECT_TRUE(AwaitReadiness(task, true, absl::Seconds(30))) << task.name();
  }
  EXPECT_TRUE(CheckHealth(cluster_->cluster().coordinator().grpc_address, absl::Seconds(5),
                          kReadinessService)
                  .ok());

  ASSERT_TRUE(cluster_->KillTask(kCoordinator, SIGKILL).ok());
  // Unanswered heartbeats: past three quarters of the 10 s heartbeat
  // timeout, each member's membership no longer holds.
  for (const LocalTask& task : members) {
    EXPECT_TRUE(AwaitReadiness(task, false, absl::Seconds(30))) << task.name();
    EXPECT_TRUE(CheckHealth(task.grpc_address, absl::Seconds(5)).ok())
        << task.name() << " should stay alive while it waits for the coordinator";
  }

  ASSERT_TRUE(cluster_->RestartTask(kCoordinator).ok());
  for (const LocalTask& task : members) {
    EXPECT_TRUE(AwaitReadiness(task, true, absl::Seconds(60))) << task.name();
  }
}

}  // namespace
}  // namespace pstrain
