#include "server/coordinator/global_step.h"

#include <limits>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

TEST(GlobalStepTest, AppliedUpdatesAdvanceIt) {
  GlobalStep step;
  EXPECT_EQ(step.value(), 0);
  EXPECT_EQ(step.Advance("worker/0#1", 1, 100).value(), 100);
  EXPECT_EQ(step.Advance("worker/1#1", 1, 50).value(), 150);
  EXPECT_EQ(step.Advance("worker/0#1", 2, 0).value(), 150);
  EXPECT_EQ(step.value(), 150);
}

TEST(GlobalStepTest, RetriedReportIsCountedOnce) {
  GlobalStep step;
  ASSERT_EQ(step.Advance("worker/0#1", 1, 100).value(), 100);
  // The response was lost; the worker sends report 1 again.
  EXPECT_EQ(step.Advance("worker/0#1", 1, 100).value(), 100);
  // A report overtaken by a newer one is not counted either.
  ASSERT_EQ(step.Advance("worker/0#1", 3, 10).value(), 110);
  EXPECT_EQ(step.Advance("worker/0#1", 2, 10).value(), 110);
}

TEST(GlobalStepTest, SequencesAreKeptApartByReporter) {
  GlobalStep step;
  ASSERT_TRUE(step.Advance("worker/0#1", 1, 10).ok());
  // The restarted worker/0 numbers its reports from 1 again.
  EXPECT_EQ(step.Advance("worker/0#2", 1, 10).value(), 20);
}

TEST(GlobalStepTest, UnnumberedReportsAlwaysCount) {
  GlobalStep step;
  ASSERT_TRUE(step.Advance("worker/0#1", 0, 10).ok());
  EXPECT_EQ(step.Advance("worker/0#1", 0, 10).value(), 20);
}

TEST(GlobalStepTest, NeverGoesBackExceptOnRestore) {
  GlobalStep step(500);
  EXPECT_EQ(step.Advance("w", 1, -3).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(step.value(), 500);
  ASSERT_EQ(step.Advance("w", 1, 10).value(), 510);
  ASSERT_TRUE(step.RestoreTo(300).ok());
  EXPECT_EQ(step.value(), 300);
  // Numbering continues across the restore: report 1 was counted, 2 is new.
  EXPECT_EQ(step.Advance("w", 1, 10).value(), 300);
  EXPECT_EQ(step.Advance("w", 2, 5).value(), 305);
  EXPECT_EQ(step.RestoreTo(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(step.value(), 305);
}

TEST(GlobalStepTest, RaisedToTheCompletedRounds) {
  GlobalStep step(10);
  EXPECT_EQ(step.RaiseTo(14).value(), 14);
  // An older round seen by a slower worker takes nothing back.
  EXPECT_EQ(step.RaiseTo(12).value(), 14);
  EXPECT_EQ(step.RaiseTo(-1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(step.value(), 14);
}

TEST(GlobalStepTest, RefusesOverflow) {
  GlobalStep step(std::numeric_limits<int64_t>::max() - 1);
  EXPECT_EQ(step.Advance("w", 0, 2).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(step.value(), std::numeric_limits<int64_t>::max() - 1);
}

TEST(GlobalStepTest, ForgottenReporterCountsAfresh) {
  GlobalStep step;
  ASSERT_TRUE(step.Advance("w", 5, 1).ok());
  step.ForgetReporter("w");
  EXPECT_EQ(step.Advance("w", 1, 1).value(), 2);
}

TEST(GlobalStepTest, ConcurrentReportsLoseNoUpdate) {
  GlobalStep step;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&step, w] {
      const std::string reporter = "worker/" + std::to_string(w) + "#1";
      for (uint64_t sequence = 1; sequence <= 1000; ++sequence) {
        ASSERT_TRUE(step.Advance(reporter, sequence, 1).ok());
        ASSERT_TRUE(step.Advance(reporter, sequence, 1).ok());  // a retry
      }
    });
  }
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(step.value(), 4000);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
