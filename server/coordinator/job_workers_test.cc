#include "server/coordinator/job_workers.h"

#include <vector>

#include "common/clock/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::ElementsAre;

TaskId Worker(int index) {
  TaskId task;
  task.set_type(TASK_TYPE_WORKER);
  task.set_index(index);
  return task;
}

Assignment Base(uint64_t generation) {
  Assignment base;
  base.set_job_id("mnist-1");
  base.set_generation(generation);
  base.set_num_workers(2);
  return base;
}

class JobWorkersTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  AssignmentBoard board_{clock_};
  JobWorkers workers_{board_};
};

TEST_F(JobWorkersTest, AWorkerThatRegistersWhileTheJobStartsJoinsWithItsPublish) {
  workers_.Plan(2, 8, true);
  EXPECT_EQ(workers_.Join(Worker(2)), WorkerJoin::kNotYet);
  EXPECT_EQ(board_.Get(Worker(2)).job_id(), "");
  EXPECT_THAT(workers_.Publish(Base(1), {}), ElementsAre(0, 1, 2));
  EXPECT_EQ(board_.Get(Worker(2)).worker_rank(), 2);
}

TEST_F(JobWorkersTest, PublishHandsTheStartRanksAndThePresentOnes) {
  workers_.Plan(2, 8, true);
  EXPECT_THAT(workers_.Publish(Base(1), {0, 3, 9}), ElementsAre(0, 1, 3));
  for (int rank : {0, 1, 3}) {
    const Assignment got = board_.Get(Worker(rank));
    EXPECT_EQ(got.job_id(), "mnist-1");
    EXPECT_EQ(got.worker_rank(), rank);
    EXPECT_EQ(got.generation(), 1u);
  }
  // Index 9 is past max_workers: not part of the job.
  EXPECT_EQ(board_.Get(Worker(9)).job_id(), "");
}

TEST_F(JobWorkersTest, AWorkerThatRegistersLaterJoinsAsItsIndex) {
  workers_.Plan(2, 8, true);
  workers_.Publish(Base(1), {});
  EXPECT_EQ(workers_.Join(Worker(2)), WorkerJoin::kJoined);
  EXPECT_EQ(board_.Get(Worker(2)).worker_rank(), 2);
  EXPECT_EQ(workers_.Join(Worker(2)), WorkerJoin::kAlreadyIn);
  EXPECT_EQ(workers_.Join(Worker(1)), WorkerJoin::kAlreadyIn);
  EXPECT_EQ(workers_.Join(Worker(8)), WorkerJoin::kBeyondLimit);
  EXPECT_THAT(workers_.Ranks(), ElementsAre(0, 1, 2));
}

TEST_F(JobWorkersTest, ARollbackRepublishesToEveryRankThatJoined) {
  workers_.Plan(2, 8, true);
  workers_.Publish(Base(1), {});
  ASSERT_EQ(workers_.Join(Worker(5)), WorkerJoin::kJoined);
  EXPECT_THAT(workers_.Publish(Base(2), {}), ElementsAre(0, 1, 5));
  EXPECT_EQ(board_.Get(Worker(5)).generation(), 2u);
  EXPECT_EQ(workers_.Join(Worker(6)), WorkerJoin::kJoined);
  EXPECT_EQ(board_.Get(Worker(6)).generation(), 2u);
}

TEST_F(JobWorkersTest, SyncSlotsChangeTheirCountOnlyWhenDealtAgain) {
  workers_.Plan(2, 8, false);
  EXPECT_THAT(workers_.Publish(Base(1), {0, 1, 2}), ElementsAre(0, 1));
  EXPECT_EQ(workers_.Join(Worker(2)), WorkerJoin::kAtABoundary);
  EXPECT_EQ(board_.Get(Worker(2)).job_id(), "");

  workers_.ChangeCount(3);
  EXPECT_THAT(workers_.Publish(Base(2), {}), ElementsAre(0, 1, 2));
  EXPECT_EQ(board_.Get(Worker(2)).generation(), 2u);

  // Down to one: the ranks above lose the job's assignment.
  workers_.ChangeCount(1);
  EXPECT_THAT(workers_.Publish(Base(3), {0, 1, 2}), ElementsAre(0));
  EXPECT_EQ(board_.Get(Worker(0)).generation(), 3u);
  EXPECT_EQ(board_.Get(Worker(1)).job_id(), "");
  EXPECT_EQ(board_.Get(Worker(2)).job_id(), "");
  EXPECT_EQ(workers_.count(), 1);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
