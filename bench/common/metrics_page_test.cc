#include "bench/common/metrics_page.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

// A worker's page and a parameter server's, as prometheus-cpp writes them.
constexpr char kWorkerPage[] = R"(# HELP pstrain_worker_steps_total Training steps computed.
# TYPE pstrain_worker_steps_total counter
pstrain_worker_steps_total 1234
pstrain_worker_step_phase_seconds_sum{phase="pull"} 0.5
pstrain_worker_step_phase_seconds_count{phase="pull"} 10
pstrain_worker_step_phase_seconds_sum{phase="compute"} 2.25 1700000000000
pstrain_worker_step_phase_seconds_bucket{phase="compute",le="+Inf"} 10
odd{label="a \"quoted\" value, with a comma"} 7
)";

constexpr char kShardPage[] = R"(# HELP pstrain_ps_embedding_rows Rows held.
# TYPE pstrain_ps_embedding_rows gauge
pstrain_ps_embedding_rows{variable="deep/embedding"} 1500
pstrain_ps_embedding_rows{variable="wide/weights"} 1498
pstrain_ps_pull_bytes_total 1.5e+09
pstrain_ps_pull_bytes_total_extra 7
pstrain_ps_pull_latency_seconds_sum 3.5
pstrain_ps_pulls_total 12 1700000000000
)";

TEST(MetricsPageTest, ReadsSamplesWithAndWithoutLabels) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse(kWorkerPage);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->Sum("pstrain_worker_steps_total"), 1234);
  EXPECT_EQ(page->Sum("pstrain_worker_step_phase_seconds_sum", {{"phase", "pull"}}), 0.5);
  // A timestamp after the value is not part of it.
  EXPECT_EQ(page->Sum("pstrain_worker_step_phase_seconds_sum", {{"phase", "compute"}}), 2.25);
  // No label filter: the whole family.
  EXPECT_EQ(page->Sum("pstrain_worker_step_phase_seconds_sum"), 2.75);
  EXPECT_EQ(page->Sum("pstrain_worker_step_phase_seconds_bucket", {{"le", "+Inf"}}), 10);
  EXPECT_EQ(page->Sum("odd", {{"label", "a \"quoted\" value, with a comma"}}), 7);
}

TEST(MetricsPageTest, SumsEverySeriesOfTheNameOrOnlyThoseWithTheLabel) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse(kShardPage);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->Sum("pstrain_ps_embedding_rows"), 2998);
  EXPECT_EQ(page->Sum("pstrain_ps_embedding_rows", {{"variable", "deep/embedding"}}), 1500);
}

TEST(MetricsPageTest, DoesNotMatchLongerNamesAndReadsExponentsAndTimestamps) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse(kShardPage);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->Sum("pstrain_ps_pull_bytes_total"), 1.5e9);
  EXPECT_EQ(page->Sum("pstrain_ps_pulls_total"), 12);
  EXPECT_FALSE(page->Has("pstrain_ps_pull"));
  EXPECT_EQ(page->Sum("pstrain_ps_pull"), 0);
}

TEST(MetricsPageTest, AbsentSeriesReadAsZeroAndAreNotOnThePage) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse(kWorkerPage);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->Sum("pstrain_worker_examples_total"), 0);
  EXPECT_FALSE(page->Has("pstrain_worker_examples_total"));
  EXPECT_EQ(page->Sum("pstrain_worker_step_phase_seconds_sum", {{"phase", "idle"}}), 0);
  EXPECT_FALSE(page->Has("pstrain_worker_step_phase_seconds_sum", {{"phase", "idle"}}));
  EXPECT_TRUE(page->Has("pstrain_worker_step_phase_seconds_sum", {{"phase", "pull"}}));
  EXPECT_TRUE(page->Has("pstrain_worker_steps_total"));
}

TEST(MetricsPageTest, RefusesALineThatIsNotASample) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse("good 1\nbroken{phase=\"pull\" 3\n");
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("line 2"), std::string::npos) << page.status();
}

TEST(MetricsPageTest, RefusesAValueThatIsNotANumber) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse("pstrain_x{a=\"b\"} many\n");
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(page.status().message().find("line 1"), std::string::npos) << page.status();
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
