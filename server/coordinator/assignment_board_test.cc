#include "server/coordinator/assignment_board.h"

#include <optional>

#include "common/clock/fake_clock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

TaskId Worker(int index) {
  TaskId task;
  task.set_type(TASK_TYPE_WORKER);
  task.set_index(index);
  return task;
}

Assignment ForJob(const std::string& job_id) {
  Assignment a;
  a.set_job_id(job_id);
  return a;
}

TEST(AssignmentBoardTest, AnswersAtOnceWhenTheCallerKnowsAnOtherJob) {
  FakeClock clock;
  AssignmentBoard board(clock);
  board.Set(Worker(0), ForJob("j-1"));
  Assignment now;
  bool called = false;
  EXPECT_EQ(board.Await(
                Worker(0), {"", 0}, clock.Now() + absl::Seconds(10),
                [&](const Assignment&) { called = true; }, &now),
            0u);
  EXPECT_EQ(now.job_id(), "j-1");
  EXPECT_FALSE(called);
  EXPECT_EQ(board.Get(Worker(1)).job_id(), "");
}

TEST(AssignmentBoardTest, ALongPollIsAnsweredWhenItsAssignmentChanges) {
  FakeClock clock;
  AssignmentBoard board(clock);
  std::optional<Assignment> got;
  Assignment now;
  const uint64_t id = board.Await(
      Worker(0), {"", 0}, clock.Now() + absl::Seconds(10), [&](const Assignment& a) { got = a; },
      &now);
  ASSERT_NE(id, 0u);
  board.Set(Worker(1), ForJob("j-1"));  // another task: still waiting
  EXPECT_FALSE(got.has_value());
  EXPECT_EQ(board.waiting(), 1);
  board.Set(Worker(0), ForJob("j-1"));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->job_id(), "j-1");
  EXPECT_EQ(board.waiting(), 0);
}

TEST(AssignmentBoardTest, ANewRunOfTheKnownJobAnswersItsPoll) {
  FakeClock clock;
  AssignmentBoard board(clock);
  Assignment first = ForJob("j-1");
  first.set_generation(7);
  board.Set(Worker(0), first);
  std::optional<Assignment> got;
  Assignment now;
  const uint64_t id = board.Await(
      Worker(0), {"j-1", 7}, clock.Now() + absl::Seconds(10), [&](const Assignment& a) { got = a; },
      &now);
  ASSERT_NE(id, 0u);  // the run it knows: wait
  board.Set(Worker(0), first);
  EXPECT_FALSE(got.has_value());
  Assignment second = first;
  second.set_generation(8);
  board.Set(Worker(0), second);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->generation(), 8u);
  // A caller that knows an older run is answered at once.
  EXPECT_EQ(
      board.Await(
          Worker(0), {"j-1", 7}, clock.Now() + absl::Seconds(10), [](const Assignment&) {}, &now),
      0u);
  EXPECT_EQ(now.generation(), 8u);
}

TEST(AssignmentBoardTest, ALongPollEndsAtItsDeadlineWithTheCurrentAssignment) {
  FakeClock clock;
  AssignmentBoard board(clock);
  board.Set(Worker(0), ForJob("j-1"));
  std::optional<Assignment> got;
  Assignment now;
  ASSERT_NE(board.Await(
                Worker(0), {"j-1", 0}, clock.Now() + absl::Seconds(10),
                [&](const Assignment& a) { got = a; }, &now),
            0u);
  clock.Advance(absl::Seconds(9));
  board.Expire();
  EXPECT_FALSE(got.has_value());
  clock.Advance(absl::Seconds(1));
  board.Expire();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->job_id(), "j-1");
}

TEST(AssignmentBoardTest, ClearingAJobSendsItsTasksBackToIdle) {
  FakeClock clock;
  AssignmentBoard board(clock);
  board.Set(Worker(0), ForJob("j-1"));
  board.Set(Worker(1), ForJob("j-2"));
  std::optional<Assignment> got;
  Assignment now;
  ASSERT_NE(board.Await(
                Worker(0), {"j-1", 0}, clock.Now() + absl::Seconds(10),
                [&](const Assignment& a) { got = a; }, &now),
            0u);
  board.ClearJob("j-1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->job_id(), "");
  EXPECT_EQ(board.Get(Worker(1)).job_id(), "j-2");
}

TEST(AssignmentBoardTest, CancelAnswersOnceAndCancelAllAnswersEveryPoll) {
  FakeClock clock;
  AssignmentBoard board(clock);
  int calls = 0;
  Assignment now;
  const uint64_t a = board.Await(
      Worker(0), {"", 0}, absl::InfiniteFuture(), [&](const Assignment&) { ++calls; }, &now);
  board.Await(
      Worker(1), {"", 0}, absl::InfiniteFuture(), [&](const Assignment&) { ++calls; }, &now);
  board.Cancel(a);
  board.Cancel(a);
  EXPECT_EQ(calls, 1);
  board.CancelAll();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(board.waiting(), 0);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
