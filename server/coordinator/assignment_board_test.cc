#include "server/coordinator/assignment_board.h"

#include <optional>
#include <string>
#include <vector>

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

// An assignment with a spec and `variables` placements, as a job of a
// model with that many variables hands out.
Assignment WithModel(const std::string& job_id, int variables) {
  Assignment a = ForJob(job_id);
  a.set_generation(2);
  a.mutable_spec()->set_name("big");
  for (int v = 0; v < variables; ++v) {
    VariablePlacement* placement = a.add_placements();
    placement->set_name("layer" + std::to_string(v));
    placement->set_shard_index(v % 3);
  }
  return a;
}

TEST(AssignmentBoardTest, WorkersOfAJobHoldOneSharedSpecAndGetItWhole) {
  FakeClock clock;
  AssignmentBoard board(clock);
  const Assignment base = WithModel("j-1", 1000);
  const AssignmentBoard::JobWide job_wide = AssignmentBoard::ShareJobWide(base);
  for (int rank = 0; rank < 3; ++rank) {
    Assignment own = base;
    own.set_worker_rank(rank);
    board.SetShared(Worker(rank), std::move(own), job_wide);
  }
  // Held once: by the test and by the board for its three tasks.
  EXPECT_EQ(job_wide.use_count(), 4);
  const Assignment got = board.Get(Worker(2));
  EXPECT_EQ(got.job_id(), "j-1");
  EXPECT_EQ(got.generation(), 2u);
  EXPECT_EQ(got.worker_rank(), 2);
  EXPECT_EQ(got.spec().name(), "big");
  ASSERT_EQ(got.placements_size(), 1000);
  EXPECT_EQ(got.placements(999).name(), "layer999");
  // Clearing the job lets it go.
  board.ClearJob("j-1");
  EXPECT_EQ(job_wide.use_count(), 1);
  EXPECT_EQ(board.Get(Worker(0)).job_id(), "");
}

TEST(AssignmentBoardTest, ALongPollGetsTheWholeSharedAssignment) {
  FakeClock clock;
  AssignmentBoard board(clock);
  std::optional<Assignment> got;
  Assignment now;
  ASSERT_NE(board.Await(
                Worker(0), {"", 0}, clock.Now() + absl::Seconds(10),
                [&](const Assignment& a) { got = a; }, &now),
            0u);
  const Assignment base = WithModel("j-1", 10);
  board.SetShared(Worker(0), base, AssignmentBoard::ShareJobWide(base));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->placements_size(), 10);
  EXPECT_EQ(got->spec().name(), "big");
  // The same run known: the poll waits.
  EXPECT_NE(
      board.Await(
          Worker(0), {"j-1", 2}, clock.Now() + absl::Seconds(10), [](const Assignment&) {}, &now),
      0u);
}

TEST(AssignmentBoardTest, AHeartbeatsViewCarriesTheJobAndReplicasButNoSpec) {
  FakeClock clock;
  AssignmentBoard board(clock);
  EXPECT_EQ(board.JobOf(Worker(0)).job_id, "");
  Assignment a = WithModel("j-1", 5);
  board.Set(Worker(0), a);
  AssignmentBoard::AssignedJob job = board.JobOf(Worker(0));
  EXPECT_EQ(job.job_id, "j-1");
  EXPECT_EQ(job.replica_epoch, 0u);
  EXPECT_TRUE(job.ps_addresses.empty());
  a.set_replica_epoch(4);
  a.add_ps_addresses("ps-1:2222");
  board.Set(Worker(0), a);
  job = board.JobOf(Worker(0));
  EXPECT_EQ(job.replica_epoch, 4u);
  EXPECT_EQ(job.ps_addresses, std::vector<std::string>{"ps-1:2222"});
  // Set (not shared) keeps the spec and placements too.
  EXPECT_EQ(board.Get(Worker(0)).placements_size(), 5);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
