#include "common/daemon/daemon.h"

#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/daemon/ready_file.h"
#include "common/net/health_client.h"
#include "common/net/http_get.h"
#include "gflags/gflags.h"
#include "gtest/gtest.h"

DECLARE_string(listen);
DECLARE_string(health_listen);
DECLARE_string(advertise_address);
DECLARE_string(metrics_listen);
DECLARE_string(coordinator_address);
DECLARE_string(ps_addresses);
DECLARE_int32(task_index);

namespace pstrain {
namespace {

DaemonOptions TestOptions(const std::string& ready_file = "") {
  DaemonOptions options;
  options.role = "test";
  options.ready_file = ready_file;
  options.shutdown_grace = absl::Milliseconds(100);
  return options;
}

TEST(DaemonTest, ServesHealthAndMetricsOnPickedPorts) {
  const std::string ready_path = testing::TempDir() + "/daemon.ready";
  Daemon daemon(TestOptions(ready_path));
  ASSERT_TRUE(daemon.Start({}).ok());

  EXPECT_TRUE(CheckHealth(daemon.grpc_address(), absl::Seconds(5)).ok());
  absl::StatusOr<std::string> metrics =
      HttpGet(daemon.metrics_address(), "/metrics", absl::Seconds(5));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(metrics->find("pstrain_process_info{role=\"test\"} 1"), std::string::npos) << *metrics;
  EXPECT_NE(metrics->find("\nprocess_start_time_seconds "), std::string::npos);

  absl::StatusOr<ReadyInfo> ready = WaitForReadyFile(ready_path, absl::Seconds(1));
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->at("grpc"), daemon.grpc_address());
  EXPECT_EQ(ready->at("metrics"), daemon.metrics_address());
  EXPECT_EQ(ready->at("role"), "test");
}

TEST(DaemonTest, ServesPlaintextHealthOnItsOwnPortWhenAsked) {
  const std::string ready_path = testing::TempDir() + "/daemon_health.ready";
  DaemonOptions options = TestOptions(ready_path);
  options.grpc.health_listen_address = "127.0.0.1:0";
  Daemon daemon(options);
  ASSERT_TRUE(daemon.Start({}).ok());

  ASSERT_NE(daemon.health_address(), "");
  EXPECT_TRUE(CheckHealth(daemon.health_address(), absl::Seconds(5)).ok());
  absl::StatusOr<ReadyInfo> ready = WaitForReadyFile(ready_path, absl::Seconds(1));
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->at("health"), daemon.health_address());
}

TEST(DaemonTest, RequestedShutdownStopsServing) {
  Daemon daemon(TestOptions());
  ASSERT_TRUE(daemon.Start({}).ok());
  const std::string address = daemon.grpc_address();
  std::thread requester([&] { daemon.RequestShutdown(); });
  EXPECT_EQ(daemon.WaitForShutdown(), 0);
  requester.join();
  absl::Status health = CheckHealth(address, absl::Milliseconds(500));
  EXPECT_FALSE(health.ok());
}

TEST(DaemonTest, TakenPortIsRefusedNamingTheAddress) {
  Daemon first(TestOptions());
  ASSERT_TRUE(first.Start({}).ok());

  DaemonOptions clashing = TestOptions();
  clashing.grpc.listen_address = first.grpc_address();
  Daemon second(clashing);
  absl::Status status = second.Start({});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find(first.grpc_address()), std::string::npos) << status;

  DaemonOptions clashing_metrics = TestOptions();
  clashing_metrics.metrics_address = first.metrics_address();
  Daemon third(clashing_metrics);
  status = third.Start({});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find(first.metrics_address()), std::string::npos) << status;
}

TEST(DaemonTest, MalformedListenAddressIsInvalidArgument) {
  DaemonOptions options = TestOptions();
  options.grpc.listen_address = "nonsense";
  Daemon daemon(options);
  absl::Status status = daemon.Start({});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("nonsense"), std::string::npos);
}

// A parameter server of a Kubernetes manifest run on one machine: its
// Service names and fixed ports become the loopback ports of the aliases,
// for what it listens on and for what it dials alike.
TEST(DaemonOptionsTest, HostAliasesReplaceListenedAndDialledAddresses) {
  gflags::FlagSaver saver;
  FLAGS_listen = "0.0.0.0:7071";
  FLAGS_metrics_listen = "0.0.0.0:9090";
  FLAGS_coordinator_address = "pstrain-coordinator:7070";
  FLAGS_ps_addresses = "pstrain-ps-0.pstrain-ps:7071,pstrain-ps-1.pstrain-ps:7071";
  FLAGS_task_index = 1;
  ::setenv("PSTRAIN_HOST_ALIASES",
           "pstrain-coordinator:7070=127.0.0.1:41000,"
           "pstrain-ps-0.pstrain-ps:7071=127.0.0.1:41001,"
           "pstrain-ps-1.pstrain-ps:7071=127.0.0.1:41002,"
           "0.0.0.0:7071=127.0.0.1:41002,0.0.0.0:9090=127.0.0.1:41003",
           1);
  absl::StatusOr<DaemonOptions> options = DaemonOptionsFromFlags(TASK_TYPE_PS);
  ::unsetenv("PSTRAIN_HOST_ALIASES");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->grpc.listen_address, "127.0.0.1:41002");
  EXPECT_EQ(options->metrics_address, "127.0.0.1:41003");
  EXPECT_EQ(options->cluster.coordinator_address, "127.0.0.1:41000");
  EXPECT_EQ(options->cluster.own_address, "127.0.0.1:41002");
  EXPECT_EQ(options->cluster.ps_addresses,
            (std::vector<std::string>{"127.0.0.1:41001", "127.0.0.1:41002"}));
  EXPECT_EQ(options->cluster.spec.chief(0), "127.0.0.1:41000");
  EXPECT_EQ(options->cluster.spec.ps(1), "127.0.0.1:41002");
}

// The kubelet probes a pod's fixed health port; on one machine it is a
// loopback port like the others.
TEST(DaemonOptionsTest, HealthListenGoesThroughHostAliases) {
  gflags::FlagSaver saver;
  FLAGS_coordinator_address = "pstrain-coordinator:7070";
  FLAGS_health_listen = "0.0.0.0:7071";
  ::setenv("PSTRAIN_HOST_ALIASES", "0.0.0.0:7071=127.0.0.1:41005", 1);
  absl::StatusOr<DaemonOptions> options = DaemonOptionsFromFlags(TASK_TYPE_WORKER);
  ::unsetenv("PSTRAIN_HOST_ALIASES");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->grpc.health_listen_address, "127.0.0.1:41005");

  FLAGS_health_listen = "7071";
  options = DaemonOptionsFromFlags(TASK_TYPE_WORKER);
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("--health_listen"), std::string::npos)
      << options.status();
}

TEST(DaemonOptionsTest, AdvertiseAddressIsWhatPeersDialAndMustHaveAPort) {
  gflags::FlagSaver saver;
  FLAGS_coordinator_address = "127.0.0.1:7070";
  FLAGS_listen = "127.0.0.1:0";
  FLAGS_advertise_address = "127.0.0.1:45000";
  absl::StatusOr<DaemonOptions> options = DaemonOptionsFromFlags(TASK_TYPE_PS);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->cluster.own_address, "127.0.0.1:45000");
  EXPECT_EQ(options->grpc.listen_address, "127.0.0.1:0");

  for (const char* bad : {"127.0.0.1:0", "nonsense"}) {
    FLAGS_advertise_address = bad;
    options = DaemonOptionsFromFlags(TASK_TYPE_PS);
    ASSERT_FALSE(options.ok()) << bad;
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(options.status().message().find(absl::StrCat("--advertise_address: '", bad, "'")),
              std::string::npos)
        << options.status();
  }
}

TEST(DaemonOptionsTest, MalformedHostAliasesAreInvalidArgument) {
  gflags::FlagSaver saver;
  FLAGS_coordinator_address = "pstrain-coordinator:7070";
  ::setenv("PSTRAIN_HOST_ALIASES", "pstrain-coordinator:7070", 1);
  absl::StatusOr<DaemonOptions> options = DaemonOptionsFromFlags(TASK_TYPE_WORKER);
  ::unsetenv("PSTRAIN_HOST_ALIASES");
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(options.status().message().find("PSTRAIN_HOST_ALIASES: entry 1"), std::string::npos)
      << options.status();
}

}  // namespace
}  // namespace pstrain
