#include "bench/cluster/prometheus_text.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

constexpr char kPage[] = R"(# HELP pstrain_worker_steps_total Training steps computed.
# TYPE pstrain_worker_steps_total counter
pstrain_worker_steps_total 1234
pstrain_worker_step_phase_seconds_sum{phase="pull"} 0.5
pstrain_worker_step_phase_seconds_count{phase="pull"} 10
pstrain_worker_step_phase_seconds_sum{phase="compute"} 2.25 1700000000000
pstrain_worker_step_phase_seconds_bucket{phase="compute",le="+Inf"} 10
odd{label="a \"quoted\" value, with a comma"} 7
)";

TEST(MetricsPageTest, ReadsSamplesWithAndWithoutLabels) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse(kPage);
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

TEST(MetricsPageTest, AbsentSeriesReadAsZero) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse(kPage);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->Sum("pstrain_worker_examples_total"), 0);
  EXPECT_EQ(page->Sum("pstrain_worker_step_phase_seconds_sum", {{"phase", "idle"}}), 0);
}

TEST(MetricsPageTest, RefusesALineThatIsNotASample) {
  absl::StatusOr<MetricsPage> page = MetricsPage::Parse("good 1\nbroken{phase=\"pull\" 3\n");
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("line 2"), std::string::npos) << page.status();
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
