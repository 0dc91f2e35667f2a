#include "common/daemon/daemon.h"

#include <thread>

#include "common/daemon/ready_file.h"
#include "common/net/health_client.h"
#include "common/net/http_get.h"
#include "gtest/gtest.h"

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
  EXPECT_NE(metrics->find("pstrain_process_start_time_seconds"), std::string::npos);

  absl::StatusOr<ReadyInfo> ready = WaitForReadyFile(ready_path, absl::Seconds(1));
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->at("grpc"), daemon.grpc_address());
  EXPECT_EQ(ready->at("metrics"), daemon.metrics_address());
  EXPECT_EQ(ready->at("role"), "test");
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

}  // namespace
}  // namespace pstrain
