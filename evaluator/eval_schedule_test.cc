#include "evaluator/eval_schedule.h"

#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace evaluator {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

CheckpointCandidate Ckpt(int64_t step, bool final = false) {
  CheckpointCandidate c;
  c.step = step;
  c.path = "/m/ckpt-" + std::to_string(step);
  c.final = final;
  c.leased = true;
  return c;
}

std::vector<int64_t> Steps(const std::vector<SkippedCandidate>& skipped) {
  std::vector<int64_t> steps;
  for (const auto& s : skipped) steps.push_back(s.checkpoint.step);
  return steps;
}

TEST(EvalScheduleTest, HonoursStartDelayThenThrottle) {
  EvalSchedule schedule(kStart, absl::Seconds(30), absl::Seconds(10));
  EXPECT_EQ(schedule.ReadyAt(), absl::InfiniteFuture());
  EXPECT_TRUE(schedule.Offer(Ckpt(100)).empty());
  EXPECT_EQ(schedule.ReadyAt(), kStart + absl::Seconds(30));
  std::vector<SkippedCandidate> skipped;
  EXPECT_FALSE(schedule.Take(kStart + absl::Seconds(29), &skipped));
  auto taken = schedule.Take(kStart + absl::Seconds(30), &skipped);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->step, 100);
  schedule.MarkEvaluated(100);

  EXPECT_TRUE(schedule.Offer(Ckpt(200)).empty());
  EXPECT_EQ(schedule.ReadyAt(), kStart + absl::Seconds(40));
  EXPECT_FALSE(schedule.Take(kStart + absl::Seconds(35), &skipped));
  EXPECT_EQ(schedule.Take(kStart + absl::Seconds(40), &skipped)->step, 200);
  EXPECT_TRUE(skipped.empty());
}

TEST(EvalScheduleTest, ANewerCheckpointReplacesAWaitingOne) {
  EvalSchedule schedule(kStart, absl::ZeroDuration(), absl::Seconds(60));
  std::vector<SkippedCandidate> skipped;
  schedule.Offer(Ckpt(1));
  ASSERT_TRUE(schedule.Take(kStart, &skipped));
  schedule.MarkEvaluated(1);
  EXPECT_TRUE(schedule.Offer(Ckpt(2)).empty());
  auto replaced = schedule.Offer(Ckpt(3));
  EXPECT_EQ(Steps(replaced), std::vector<int64_t>{2});
  EXPECT_EQ(replaced[0].reason, SkipReason::kThrottled);
  // An older one arriving late is skipped at once, and a repeat ignored.
  EXPECT_EQ(Steps(schedule.Offer(Ckpt(2))), std::vector<int64_t>{2});
  EXPECT_TRUE(schedule.Offer(Ckpt(3)).empty());
  EXPECT_EQ(schedule.Take(kStart + absl::Seconds(60), &skipped)->step, 3);
}

TEST(EvalScheduleTest, TheFinalCheckpointNeverWaitsAndIsNeverSkipped) {
  EvalSchedule schedule(kStart, absl::Seconds(600), absl::Seconds(600));
  std::vector<SkippedCandidate> skipped;
  schedule.Offer(Ckpt(10));
  schedule.Offer(Ckpt(20, /*final=*/true));
  EXPECT_EQ(schedule.ReadyAt(), absl::InfinitePast());
  auto taken = schedule.Take(kStart, &skipped);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->step, 20);
  EXPECT_TRUE(taken->final);
  EXPECT_EQ(Steps(skipped), std::vector<int64_t>{10});
  EXPECT_FALSE(schedule.has_pending());
}

TEST(EvalScheduleTest, SkipsWhatWasEvaluatedExceptAFinalCheckpoint) {
  EvalSchedule schedule(kStart, absl::ZeroDuration(), absl::ZeroDuration());
  schedule.MarkEvaluated(50);
  auto skipped = schedule.Offer(Ckpt(50));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, SkipReason::kAlreadyEvaluated);
  skipped = schedule.Offer(Ckpt(40));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].reason, SkipReason::kOlderThanEvaluated);
  EXPECT_TRUE(schedule.Offer(Ckpt(50, /*final=*/true)).empty());
  std::vector<SkippedCandidate> none;
  EXPECT_EQ(schedule.Take(kStart, &none)->step, 50);
  EXPECT_EQ(SkipReasonLabel(SkipReason::kOlderThanEvaluated), "older_than_evaluated");
}

TEST(EvalScheduleTest, ClearReturnsWhatWaits) {
  EvalSchedule schedule(kStart, absl::Seconds(100), absl::ZeroDuration());
  schedule.Offer(Ckpt(7));
  auto dropped = schedule.Clear();
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].step, 7);
  EXPECT_FALSE(schedule.has_pending());
}

}  // namespace
}  // namespace evaluator
}  // namespace pstrain
