#include "common/config/cluster_config.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What Kubeflow's TFJob operator sets for a job "mnist" with one chief, two
// ps and two workers; the evaluator is not listed in the cluster.
std::string TfJobConfig(const std::string& type, int index) {
  return R"({"cluster": {"chief": ["mnist-chief-0.kubeflow.svc:2222"],)"
         R"( "ps": ["mnist-ps-0.kubeflow.svc:2222", "mnist-ps-1.kubeflow.svc:2222"],)"
         R"( "worker": ["mnist-worker-0.kubeflow.svc:2222", "mnist-worker-1.kubeflow.svc:2222"]},)"
         R"( "task": {"type": ")" +
         type + R"(", "index": )" + std::to_string(index) + R"(}, "environment": "cloud"})";
}

TEST(ResolveClusterConfigTest, TfJobChief) {
  absl::StatusOr<ClusterConfig> config =
      ResolveClusterConfig(ClusterFlags{}, TfJobConfig("chief", 0), TASK_TYPE_CHIEF);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task.type(), TASK_TYPE_CHIEF);
  EXPECT_EQ(config->task.index(), 0);
  EXPECT_EQ(config->coordinator_address, "mnist-chief-0.kubeflow.svc:2222");
  EXPECT_EQ(config->own_address, "mnist-chief-0.kubeflow.svc:2222");
  EXPECT_EQ(config->listen_address, "0.0.0.0:2222");
  EXPECT_THAT(config->ps_addresses,
              ElementsAre("mnist-ps-0.kubeflow.svc:2222", "mnist-ps-1.kubeflow.svc:2222"));
  EXPECT_EQ(config->spec.worker_size(), 2);
}

TEST(ResolveClusterConfigTest, TfJobPs) {
  absl::StatusOr<ClusterConfig> config =
      ResolveClusterConfig(ClusterFlags{}, TfJobConfig("ps", 1), TASK_TYPE_PS);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task.type(), TASK_TYPE_PS);
  EXPECT_EQ(config->task.index(), 1);
  EXPECT_EQ(config->coordinator_address, "mnist-chief-0.kubeflow.svc:2222");
  EXPECT_EQ(config->own_address, "mnist-ps-1.kubeflow.svc:2222");
  EXPECT_EQ(config->listen_address, "0.0.0.0:2222");
}

TEST(ResolveClusterConfigTest, TfJobWorker) {
  absl::StatusOr<ClusterConfig> config =
      ResolveClusterConfig(ClusterFlags{}, TfJobConfig("worker", 1), TASK_TYPE_WORKER);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task.index(), 1);
  EXPECT_EQ(config->coordinator_address, "mnist-chief-0.kubeflow.svc:2222");
  EXPECT_EQ(config->own_address, "mnist-worker-1.kubeflow.svc:2222");
  EXPECT_EQ(config->ps_addresses.size(), 2);
}

TEST(ResolveClusterConfigTest, TfJobUnlistedEvaluator) {
  absl::StatusOr<ClusterConfig> config =
      ResolveClusterConfig(ClusterFlags{}, TfJobConfig("evaluator", 0), TASK_TYPE_EVALUATOR);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task.type(), TASK_TYPE_EVALUATOR);
  EXPECT_EQ(config->task.index(), 0);
  EXPECT_EQ(config->coordinator_address, "mnist-chief-0.kubeflow.svc:2222");
  EXPECT_EQ(config->own_address, "");
  EXPECT_EQ(config->listen_address, "127.0.0.1:0");
}

TEST(ResolveClusterConfigTest, TfJobMasterRunsTheCoordinator) {
  absl::StatusOr<ClusterConfig> config = ResolveClusterConfig(
      ClusterFlags{},
      R"({"cluster": {"master": ["job-master-0:2222"], "ps": ["job-ps-0:2222"]},
          "task": {"type": "master", "index": 0}, "environment": "cloud"})",
      TASK_TYPE_CHIEF);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->coordinator_address, "job-master-0:2222");
}

TEST(ResolveClusterConfigTest, FlagsAloneMakeALocalCluster) {
  ClusterFlags flags;
  flags.coordinator_address = "127.0.0.1:5000";
  flags.ps_addresses = "127.0.0.1:5001, 127.0.0.1:5002";
  flags.task_index = 3;
  absl::StatusOr<ClusterConfig> config =
      ResolveClusterConfig(flags, std::nullopt, TASK_TYPE_WORKER);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->task.type(), TASK_TYPE_WORKER);
  EXPECT_EQ(config->task.index(), 3);  // workers are not listed: any index
  EXPECT_EQ(config->coordinator_address, "127.0.0.1:5000");
  EXPECT_THAT(config->ps_addresses, ElementsAre("127.0.0.1:5001", "127.0.0.1:5002"));
  EXPECT_EQ(config->own_address, "");
  EXPECT_EQ(config->listen_address, "127.0.0.1:0");

  absl::StatusOr<ClusterConfig> chief =
      ResolveClusterConfig(ClusterFlags{}, std::string("  "), TASK_TYPE_CHIEF);
  ASSERT_TRUE(chief.ok()) << chief.status();  // a blank TF_CONFIG is unset
  EXPECT_EQ(chief->task.index(), 0);
  EXPECT_EQ(chief->coordinator_address, "");
}

TEST(ResolveClusterConfigTest, FlagsOverrideEachField) {
  const std::string tf_config = TfJobConfig("ps", 0);
  {
    ClusterFlags flags;
    flags.coordinator_address = "other-chief:3333";
    absl::StatusOr<ClusterConfig> config = ResolveClusterConfig(flags, tf_config, TASK_TYPE_PS);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->coordinator_address, "other-chief:3333");
    EXPECT_THAT(config->spec.chief(), ElementsAre("other-chief:3333"));
    EXPECT_EQ(config->ps_addresses.size(), 2);  // untouched
  }
  {
    ClusterFlags flags;
    flags.ps_addresses = "a:1,b:2,c:3";
    absl::StatusOr<ClusterConfig> config = ResolveClusterConfig(flags, tf_config, TASK_TYPE_PS);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_THAT(config->ps_addresses, ElementsAre("a:1", "b:2", "c:3"));
    EXPECT_THAT(config->spec.ps(), ElementsAre("a:1", "b:2", "c:3"));
    EXPECT_EQ(config->own_address, "a:1");
    EXPECT_EQ(config->listen_address, "0.0.0.0:1");
  }
  {
    ClusterFlags flags;
    flags.task_index = 1;
    absl::StatusOr<ClusterConfig> config = ResolveClusterConfig(flags, tf_config, TASK_TYPE_PS);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->task.index(), 1);
    EXPECT_EQ(config->own_address, "mnist-ps-1.kubeflow.svc:2222");
  }
  {
    ClusterFlags flags;
    flags.listen_address = "10.0.0.7:0";
    absl::StatusOr<ClusterConfig> config = ResolveClusterConfig(flags, tf_config, TASK_TYPE_PS);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(config->listen_address, "10.0.0.7:0");
    EXPECT_EQ(config->own_address, "mnist-ps-0.kubeflow.svc:2222");
  }
}

TEST(ResolveClusterConfigTest, RefusesTaskOfAnotherRole) {
  absl::StatusOr<ClusterConfig> config =
      ResolveClusterConfig(ClusterFlags{}, TfJobConfig("worker", 0), TASK_TYPE_PS);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "TF_CONFIG: task.type is \"worker\" but this process is a ps");
}

TEST(ResolveClusterConfigTest, PassesOnTfConfigErrors) {
  absl::StatusOr<ClusterConfig> config =
      ResolveClusterConfig(ClusterFlags{}, std::string("{\"cluster\": "), TASK_TYPE_WORKER);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("TF_CONFIG is not valid JSON: "));

  config = ResolveClusterConfig(ClusterFlags{}, TfJobConfig("worker", 2), TASK_TYPE_WORKER);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "TF_CONFIG: task.index 2 is out of range: cluster.worker has 2 entries");
}

TEST(ResolveClusterConfigTest, RefusesBadFlags) {
  struct Case {
    ClusterFlags flags;
    TaskType type;
    const char* message;
  };
  ClusterFlags bad_ps;
  bad_ps.coordinator_address = "c:1";
  bad_ps.ps_addresses = "p0:1,localhost";
  ClusterFlags empty_ps_entry;
  empty_ps_entry.coordinator_address = "c:1";
  empty_ps_entry.ps_addresses = "p0:1,,p2:1";
  ClusterFlags bad_coordinator;
  bad_coordinator.coordinator_address = "chief";
  ClusterFlags bad_listen;
  bad_listen.listen_address = "0.0.0.0";
  ClusterFlags negative_index;
  negative_index.coordinator_address = "c:1";
  negative_index.task_index = -1;
  ClusterFlags ps_index_out_of_range;
  ps_index_out_of_range.coordinator_address = "c:1";
  ps_index_out_of_range.ps_addresses = "p0:1,p1:1";
  ps_index_out_of_range.task_index = 4;
  ClusterFlags chief_index;
  chief_index.task_index = 1;
  ClusterFlags no_coordinator;
  no_coordinator.ps_addresses = "p0:1";

  const Case cases[] = {
      {bad_ps, TASK_TYPE_WORKER, "--ps_addresses: 'localhost' is not host:port"},
      {empty_ps_entry, TASK_TYPE_WORKER, "--ps_addresses: entry 2 of 'p0:1,,p2:1' is empty"},
      {bad_coordinator, TASK_TYPE_WORKER, "--coordinator_address: 'chief' is not host:port"},
      {bad_listen, TASK_TYPE_CHIEF, "--listen: '0.0.0.0' is not host:port"},
      {negative_index, TASK_TYPE_WORKER, "--task_index must be >= 0, got -1"},
      {ps_index_out_of_range, TASK_TYPE_PS,
       "--task_index 4 is out of range: cluster.ps (from --ps_addresses) has 2 entries"},
      {chief_index, TASK_TYPE_CHIEF, "--task_index must be 0 for the chief, got 1"},
      {no_coordinator, TASK_TYPE_WORKER,
       "no coordinator address for this worker: give --coordinator_address"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ClusterConfig> config = ResolveClusterConfig(c.flags, std::nullopt, c.type);
    ASSERT_FALSE(config.ok()) << c.message;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(c.message));
  }
}

TEST(ResolveClusterConfigTest, FlagIndexMustFitTfConfigList) {
  ClusterFlags flags;
  flags.task_index = 2;
  absl::StatusOr<ClusterConfig> config =
      ResolveClusterConfig(flags, TfJobConfig("worker", 0), TASK_TYPE_WORKER);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "--task_index 2 is out of range: cluster.worker (from TF_CONFIG) has 2 entries");

  // A ps list from the flag shorter than TF_CONFIG's index.
  flags = ClusterFlags{};
  flags.ps_addresses = "only-ps:1";
  config = ResolveClusterConfig(flags, TfJobConfig("ps", 1), TASK_TYPE_PS);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "TF_CONFIG: task.index 1 is out of range: cluster.ps (from --ps_addresses) has 1 "
            "entry");
}

}  // namespace
}  // namespace pstrain
