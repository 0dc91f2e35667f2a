#include "bench/sim/latency_sample.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

TEST(LatencySampleTest, EmptyIsZero) {
  LatencySample sample;
  EXPECT_EQ(sample.count(), 0);
  EXPECT_EQ(sample.Percentile(50), absl::ZeroDuration());
  EXPECT_EQ(sample.Mean(), absl::ZeroDuration());
}

TEST(LatencySampleTest, NearestRankOfOneToHundred) {
  LatencySample sample;
  // Added out of order: the percentile must not depend on arrival order.
  for (int i = 100; i >= 1; --i) sample.Add(absl::Milliseconds(i));
  EXPECT_EQ(sample.count(), 100);
  EXPECT_EQ(sample.Percentile(50), absl::Milliseconds(50));
  EXPECT_EQ(sample.Percentile(99), absl::Milliseconds(99));
  EXPECT_EQ(sample.Percentile(99.5), absl::Milliseconds(100));
  EXPECT_EQ(sample.Percentile(0), absl::Milliseconds(1));
  EXPECT_EQ(sample.Percentile(100), absl::Milliseconds(100));
  EXPECT_EQ(sample.Mean(), absl::Microseconds(50500));
}

TEST(LatencySampleTest, OneSlowCallInAHundredShowsAtP99NotP50) {
  LatencySample sample;
  for (int i = 0; i < 98; ++i) sample.Add(absl::Microseconds(200));
  sample.Add(absl::Seconds(1));
  sample.Add(absl::Seconds(2));
  EXPECT_EQ(sample.Percentile(50), absl::Microseconds(200));
  EXPECT_EQ(sample.Percentile(99), absl::Seconds(1));
  EXPECT_EQ(sample.Percentile(100), absl::Seconds(2));
}

TEST(LatencySampleTest, MergeKeepsEveryLatencyAndSortsAgain) {
  LatencySample a;
  LatencySample b;
  a.Add(absl::Milliseconds(3));
  a.Add(absl::Milliseconds(4));
  EXPECT_EQ(a.Percentile(50), absl::Milliseconds(3));
  b.Add(absl::Milliseconds(1));
  b.Add(absl::Milliseconds(2));
  a.Merge(b);
  EXPECT_EQ(a.count(), 4);
  EXPECT_EQ(a.Percentile(25), absl::Milliseconds(1));
  EXPECT_EQ(a.Percentile(50), absl::Milliseconds(2));
  a.Add(absl::Microseconds(500));  // after a sort: order must be redone
  EXPECT_EQ(a.Percentile(0), absl::Microseconds(500));
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
