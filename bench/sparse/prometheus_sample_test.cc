#include "bench/sparse/prometheus_sample.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

constexpr char kPage[] = R"(# HELP pstrain_ps_embedding_rows Rows held.
# TYPE pstrain_ps_embedding_rows gauge
pstrain_ps_embedding_rows{variable="deep/embedding"} 1500
pstrain_ps_embedding_rows{variable="wide/weights"} 1498
pstrain_ps_pull_bytes_total 1.5e+09
pstrain_ps_pull_bytes_total_extra 7
pstrain_ps_pull_latency_seconds_sum 3.5
pstrain_ps_pulls_total 12 1700000000000
)";

TEST(SumSamplesTest, SumsEverySeriesOfTheName) {
  EXPECT_EQ(*SumSamples(kPage, "pstrain_ps_embedding_rows"), 2998);
}

TEST(SumSamplesTest, KeepsOnlyTheSeriesWithTheLabel) {
  EXPECT_EQ(*SumSamples(kPage, "pstrain_ps_embedding_rows", "variable=\"deep/embedding\""), 1500);
}

TEST(SumSamplesTest, DoesNotMatchLongerNamesAndReadsExponentsAndTimestamps) {
  EXPECT_EQ(*SumSamples(kPage, "pstrain_ps_pull_bytes_total"), 1.5e9);
  EXPECT_EQ(*SumSamples(kPage, "pstrain_ps_pulls_total"), 12);
}

TEST(SumSamplesTest, MissingMetricIsNotFound) {
  EXPECT_EQ(SumSamples(kPage, "pstrain_ps_pull").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(SumSamples(kPage, "pstrain_ps_embedding_rows", "variable=\"other\"").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SumSamplesTest, ValueThatIsNotANumberIsInvalid) {
  EXPECT_EQ(SumSamples("pstrain_x{a=\"b\"} many\n", "pstrain_x").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
