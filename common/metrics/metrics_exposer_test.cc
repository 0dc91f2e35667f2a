#include "common/metrics/metrics_exposer.h"

#include <memory>
#include <string>

#include "common/net/http_get.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

TEST(MetricsExposerTest, ServesTheRegistryBuildInfoAndProcessMetrics) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildCounter()
      .Name("pstrain_test_things_total")
      .Help("Things counted by the test.")
      .Register(*registry)
      .Add({})
      .Increment(3);
  absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer =
      MetricsExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  EXPECT_THAT((*exposer)->address(), ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE((*exposer)->address(), "127.0.0.1:0");

  absl::StatusOr<std::string> page = HttpGet((*exposer)->address(), "/metrics", absl::Seconds(10));
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(*page, HasSubstr("pstrain_test_things_total 3"));
  EXPECT_THAT(*page, HasSubstr("pstrain_build_info{"));
  EXPECT_THAT(*page, HasSubstr("# TYPE process_cpu_seconds_total counter"));
  EXPECT_THAT(*page, HasSubstr("\nprocess_resident_memory_bytes "));
  EXPECT_THAT(*page, HasSubstr("\nprocess_start_time_seconds "));
  EXPECT_THAT(*page, HasSubstr("\nprocess_open_fds "));
}

TEST(MetricsExposerTest, APortInUseIsUnavailableNamingTheAddress) {
  auto registry = std::make_shared<prometheus::Registry>();
  absl::StatusOr<std::unique_ptr<MetricsExposer>> first =
      MetricsExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::unique_ptr<MetricsExposer>> second =
      MetricsExposer::Start((*first)->address(), registry);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr((*first)->address()));
}

TEST(MetricsExposerTest, NotHostPortIsInvalidArgument) {
  absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer =
      MetricsExposer::Start("nonsense", std::make_shared<prometheus::Registry>());
  EXPECT_EQ(exposer.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
