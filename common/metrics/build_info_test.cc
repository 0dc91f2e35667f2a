#include "common/metrics/build_info.h"

#include <string>

#include "gtest/gtest.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace pstrain {
namespace {

TEST(BuildInfoTest, VersionIsSemanticAndTheCommitIsAHashOrUnknown) {
  const BuildInfo build = CurrentBuildInfo();
  EXPECT_EQ(std::count(build.version.begin(), build.version.end(), '.'), 2) << build.version;
  const std::string commit = build.git_commit;
  const bool is_hash = commit.size() >= 40 && commit.find_first_not_of("0123456789abcdef") >= 40;
  EXPECT_TRUE(commit == "unknown" || is_hash) << commit;
  EXPECT_EQ(build.stamped(), is_hash) << commit;
}

TEST(BuildInfoTest, VersionTextNamesTheCommitOrSaysTheBuildIsUnstamped) {
  const std::string hash = "0123456789abcdef0123456789abcdef01234567";
  EXPECT_EQ(VersionText("pstrain", {"1.2.3", hash}), "pstrain 1.2.3\ncommit: " + hash + "\n");
  EXPECT_EQ(VersionText("pstrain", {"1.2.3", hash + "-dirty"}),
            "pstrain 1.2.3\ncommit: " + hash + " (with uncommitted changes)\n");
  EXPECT_EQ(VersionText("pstrain", {"1.2.3", "unknown"}),
            "pstrain 1.2.3\ncommit: unknown (unstamped build)\n");
}

TEST(BuildInfoTest, RegistersOneConstantSeriesLabelledWithTheBuild) {
  prometheus::Registry registry;
  RegisterBuildInfo(registry);
  const std::vector<prometheus::MetricFamily> families = registry.Collect();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].name, "pstrain_build_info");
  ASSERT_EQ(families[0].metric.size(), 1u);
  const prometheus::ClientMetric& series = families[0].metric[0];
  EXPECT_EQ(series.gauge.value, 1);
  std::map<std::string, std::string> labels;
  for (const auto& label : series.label) labels[label.name] = label.value;
  EXPECT_EQ(labels["version"], CurrentBuildInfo().version);
  EXPECT_EQ(labels["git_commit"], CurrentBuildInfo().git_commit);
}

}  // namespace
}  // namespace pstrain
