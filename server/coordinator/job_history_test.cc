#include "server/coordinator/job_history.h"

#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

JobEvent Progress(int64_t step) {
  JobEvent event;
  event.set_unix_ms(step);
  event.mutable_progress()->set_global_step(step);
  return event;
}

JobEvent Status(JobState state) {
  JobEvent event;
  event.mutable_status()->set_state(state);
  return event;
}

std::vector<int64_t> ProgressSteps(const JobHistory::Read& read) {
  std::vector<int64_t> steps;
  for (const JobEvent& event : read.events) {
    if (event.has_progress()) steps.push_back(event.progress().global_step());
  }
  return steps;
}

TEST(JobHistoryTest, ReadsWhatCameAfterASequenceNumberInOrder) {
  JobHistory history;
  history.Append("a", Status(JOB_STATE_QUEUED));
  history.Append("a", Progress(10));
  history.Append("b", Progress(99));
  history.Append("a", Progress(20));
  JobHistory::Read all = history.After("a", 0);
  ASSERT_EQ(all.events.size(), 3u);
  EXPECT_EQ(all.events[0].status().state(), JOB_STATE_QUEUED);
  EXPECT_EQ(ProgressSteps(all), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(all.next, 3u);
  history.Append("a", Status(JOB_STATE_SUCCEEDED));
  JobHistory::Read more = history.After("a", all.next);
  ASSERT_EQ(more.events.size(), 1u);
  EXPECT_EQ(more.events[0].status().state(), JOB_STATE_SUCCEEDED);
  EXPECT_EQ(more.next, 4u);
  EXPECT_TRUE(history.After("a", more.next).events.empty());
  EXPECT_EQ(history.After("a", more.next).next, 4u);
}

TEST(JobHistoryTest, AnUnknownJobHasNoEvents) {
  JobHistory history;
  JobHistory::Read read = history.After("nobody", 7);
  EXPECT_TRUE(read.events.empty());
  EXPECT_EQ(read.next, 7u);
}

TEST(JobHistoryTest, ALongRunKeepsEvenlySpacedProgressAndTheNewestPoint) {
  JobHistoryOptions options;
  options.progress_points = 10;
  JobHistory history(options);
  history.Append("a", Status(JOB_STATE_RUNNING));
  for (int64_t step = 1; step <= 1000; ++step) history.Append("a", Progress(step));
  JobHistory::Read read = history.After("a", 0);
  const std::vector<int64_t> steps = ProgressSteps(read);
  ASSERT_GE(steps.size(), 5u);
  EXPECT_LE(steps.size(), 11u);
  EXPECT_EQ(steps.front(), 1);
  EXPECT_EQ(steps.back(), 1000);
  // Every gap but the last (to the newest point) is the same stride.
  std::set<int64_t> gaps;
  for (size_t i = 1; i + 1 < steps.size(); ++i) gaps.insert(steps[i] - steps[i - 1]);
  EXPECT_EQ(gaps.size(), 1u) << ::testing::PrintToString(steps);
  // The state change is never thinned away.
  EXPECT_EQ(read.events.front().status().state(), JOB_STATE_RUNNING);
  EXPECT_EQ(read.next, 1001u);
}

TEST(JobHistoryTest, KeepsTheNewestOtherEvents) {
  JobHistoryOptions options;
  options.other_events = 2;
  JobHistory history(options);
  history.Append("a", Status(JOB_STATE_QUEUED));
  history.Append("a", Status(JOB_STATE_RUNNING));
  history.Append("a", Status(JOB_STATE_FINISHING));
  JobHistory::Read read = history.After("a", 0);
  ASSERT_EQ(read.events.size(), 2u);
  EXPECT_EQ(read.events[0].status().state(), JOB_STATE_RUNNING);
  EXPECT_EQ(read.events[1].status().state(), JOB_STATE_FINISHING);
}

TEST(JobHistoryTest, ForgetsTheJobThatWentLongestWithoutAnEvent) {
  JobHistoryOptions options;
  options.jobs = 2;
  JobHistory history(options);
  history.Append("a", Progress(1));
  history.Append("b", Progress(1));
  history.Append("a", Progress(2));  // a is newer than b now
  history.Append("c", Progress(1));
  EXPECT_EQ(history.After("a", 0).events.size(), 2u);
  EXPECT_TRUE(history.After("b", 0).events.empty());
  EXPECT_EQ(history.After("c", 0).events.size(), 1u);
}

TEST(JobHistoryTest, SeedsOnlyAJobItDoesNotHold) {
  JobHistoryOptions options;
  options.progress_points = 10;
  JobHistory history(options);
  EXPECT_FALSE(history.Holds("a"));
  std::vector<JobEvent> earlier;
  for (int64_t step = 1; step <= 100; ++step) earlier.push_back(Progress(step));
  EXPECT_TRUE(history.Seed("a", earlier));
  EXPECT_TRUE(history.Holds("a"));
  // Thinned as appended ones are.
  const std::vector<int64_t> steps = ProgressSteps(history.After("a", 0));
  EXPECT_LE(steps.size(), 11u);
  EXPECT_EQ(steps.back(), 100);
  EXPECT_FALSE(history.Seed("a", {Status(JOB_STATE_FAILED)}));
  for (const JobEvent& event : history.After("a", 0).events) EXPECT_FALSE(event.has_status());
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
