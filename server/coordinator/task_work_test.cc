#include "server/coordinator/task_work.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"
#include "server/coordinator/membership_registry.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// The ledgers of a running job and the membership that feeds them.
class TaskWorkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<MembershipRegistry>> membership =
        MembershipRegistry::Create(clock_);
    ASSERT_TRUE(membership.ok()) << membership.status();
    membership_ = std::move(*membership);
    DataLeaseOptions options;
    options.num_records = 100;
    options.chunk_size = 10;
    options.epochs = 1;
    absl::StatusOr<std::unique_ptr<DataLeaseManager>> data =
        DataLeaseManager::Create(clock_, options);
    ASSERT_TRUE(data.ok()) << data.status();
    data_ = std::move(*data);
    ledgers_ = {data_.get(), &checkpoints_};
  }

  FakeClock clock_;
  std::unique_ptr<MembershipRegistry> membership_;
  std::unique_ptr<DataLeaseManager> data_;
  RetentionPolicy checkpoints_{1};
  JobLedgers ledgers_;
};

TEST_F(TaskWorkTest, LostEvaluatorNoLongerProtectsItsCheckpoint) {
  const TaskId evaluator = MakeTask(TASK_TYPE_EVALUATOR, 0);
  ASSERT_TRUE(membership_->Register(evaluator, 5, "", "").ok());
  ASSERT_TRUE(checkpoints_.Acquire(100, HolderName(evaluator, 5)).ok());
  EXPECT_THAT(checkpoints_.ToDelete({100, 200}), IsEmpty());

  clock_.Advance(absl::Seconds(11));
  std::vector<Member> lost = membership_->CheckDeadlines();
  ASSERT_THAT(lost, SizeIs(1));
  EXPECT_EQ(HandBackWork(lost[0].task(), lost[0].incarnation(), ledgers_),
            "evaluator/0#5 handed back 0 data leases and 1 checkpoint lease");
  EXPECT_THAT(checkpoints_.ToDelete({100, 200}), ElementsAre(100));
}

TEST_F(TaskWorkTest, RestartedWorkersDataGoesToTheNextWorker) {
  const TaskId worker = MakeTask(TASK_TYPE_WORKER, 0);
  ASSERT_TRUE(membership_->Register(worker, 7, "", "").ok());
  absl::StatusOr<DataLease> lease = data_->Acquire(HolderName(worker, 7));
  ASSERT_TRUE(lease.ok());

  absl::StatusOr<RegisterResult> restarted = membership_->Register(worker, 8, "", "");
  ASSERT_TRUE(restarted.ok());
  ASSERT_EQ(restarted->replaced_incarnation, 7u);
  EXPECT_EQ(HandBackWork(worker, restarted->replaced_incarnation, ledgers_),
            "worker/0#7 handed back 1 data lease and 0 checkpoint leases");

  absl::StatusOr<DataLease> next = data_->Acquire(HolderName(worker, 8));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->range().begin(), lease->range().begin());
  EXPECT_EQ(next->range().end(), lease->range().end());
  // The old process's late completion is refused: the records are not
  // counted twice.
  EXPECT_EQ(data_->Complete(lease->lease_id(), HolderName(worker, 7), {}).code(),
            absl::StatusCode::kNotFound);
}

TEST_F(TaskWorkTest, HandingBackTwiceChangesNothing) {
  const TaskId worker = MakeTask(TASK_TYPE_WORKER, 1);
  ASSERT_TRUE(data_->Acquire(HolderName(worker, 3)).ok());
  HandBackWork(worker, 3, ledgers_);
  EXPECT_EQ(HandBackWork(worker, 3, ledgers_),
            "worker/1#3 handed back 0 data leases and 0 checkpoint leases");
}

TEST_F(TaskWorkTest, MissingLedgersAreSkipped) {
  EXPECT_EQ(HandBackWork(MakeTask(TASK_TYPE_EVALUATOR, 0), 1, JobLedgers()),
            "evaluator/0#1 handed back 0 data leases and 0 checkpoint leases");
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
