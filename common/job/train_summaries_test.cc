#include "common/job/train_summaries.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/clock/fake_clock.h"
#include "common/summary/file_summary_writer.h"
#include "common/summary/scalar_jsonl.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

class TrainSummariesTest : public testing::Test {
 protected:
  std::unique_ptr<TrainSummaries> Make(const std::string& name, int64_t every_steps) {
    dir_ = testing::TempDir() + "/" + name;
    absl::StatusOr<std::unique_ptr<FileSummaryWriter>> writer =
        FileSummaryWriter::Open(&env_, dir_);
    EXPECT_TRUE(writer.ok()) << writer.status();
    OptimizerSpec optimizer;
    optimizer.set_learning_rate(0.5);
    optimizer.mutable_schedule()->mutable_exponential()->set_decay_steps(100);
    optimizer.mutable_schedule()->mutable_exponential()->set_rate(0.5);
    absl::StatusOr<LearningRate> rate = LearningRate::Create(optimizer);
    EXPECT_TRUE(rate.ok()) << rate.status();
    return std::make_unique<TrainSummaries>(*std::move(writer), *rate, every_steps, clock_);
  }

  std::vector<ScalarRecord> Read(const std::string& tag) {
    absl::StatusOr<std::vector<ScalarRecord>> records =
        ReadScalarJsonl(env_, dir_ + "/scalars.jsonl");
    EXPECT_TRUE(records.ok()) << records.status();
    std::vector<ScalarRecord> of_tag;
    for (const ScalarRecord& record : *records) {
      if (record.tag == tag) of_tag.push_back(record);
    }
    return of_tag;
  }

  PosixEnv env_;
  FakeClock clock_;
  std::string dir_;
};

TEST_F(TrainSummariesTest, WritesOncePerBoundaryWhateverTheReportOrder) {
  auto summaries = Make("boundaries", 100);
  summaries->OnProgress(40, 2.0, 1000);  // first report: written
  summaries->OnProgress(90, 1.8, 1000);  // same block of 100: not written
  clock_.Advance(absl::Seconds(2));
  summaries->OnProgress(130, 1.5, 1200);  // crossed 100: written
  summaries->OnProgress(120, 1.6, 1100);  // late report of an older step
  summaries->OnProgress(199, 1.4, 1200);
  clock_.Advance(absl::Seconds(1));
  summaries->OnProgress(230, 1.2, 1300);  // crossed 200
  ASSERT_TRUE(summaries->Close(250).ok());

  std::vector<ScalarRecord> loss = Read("loss");
  ASSERT_EQ(loss.size(), 4u);
  EXPECT_EQ(loss[0].step, 40);
  EXPECT_EQ(loss[1].step, 130);
  EXPECT_DOUBLE_EQ(loss[1].value, 1.5);
  EXPECT_EQ(loss[2].step, 230);
  // Close writes the last values at the final step.
  EXPECT_EQ(loss[3].step, 250);
  EXPECT_DOUBLE_EQ(loss[3].value, 1.2);

  std::vector<ScalarRecord> rate = Read("examples_per_sec");
  ASSERT_EQ(rate.size(), 4u);
  EXPECT_DOUBLE_EQ(rate[2].value, 1300);

  // Over the writes so far: 90 steps in 2 s, then 190 steps in 3 s.
  std::vector<ScalarRecord> speed = Read("global_step_per_sec");
  ASSERT_EQ(speed.size(), 3u);  // none for the first write
  EXPECT_DOUBLE_EQ(speed[0].value, 45);
  EXPECT_DOUBLE_EQ(speed[1].value, 190.0 / 3);
  EXPECT_DOUBLE_EQ(speed[2].value, 210.0 / 3);  // Close at 250, no time later

  // The schedule's rate at each step: 0.5 * 0.5^(step / 100).
  std::vector<ScalarRecord> learning_rate = Read("learning_rate");
  ASSERT_EQ(learning_rate.size(), 4u);
  EXPECT_NEAR(learning_rate[2].value, 0.5 * std::pow(0.5, 2.3), 1e-6);
}

TEST_F(TrainSummariesTest, TheRateCoversTheLastFewWritesNotABurst) {
  auto summaries = Make("rate", 10);
  // Ten reports a second apart, 100 steps each, and then one arriving
  // 1 ms after the last: a burst, not a speed-up.
  for (int i = 1; i <= 10; ++i) {
    summaries->OnProgress(100 * i, 1.0, 100);
    clock_.Advance(i < 10 ? absl::Seconds(1) : absl::Milliseconds(1));
  }
  summaries->OnProgress(1100, 1.0, 100);
  ASSERT_TRUE(summaries->Close(1100).ok());
  std::vector<ScalarRecord> speed = Read("global_step_per_sec");
  ASSERT_FALSE(speed.empty());
  // 500 steps over the 4.001 s since the fifth write back, not 100 / 0.001.
  EXPECT_NEAR(speed.back().value, 500 / 4.001, 1e-6);
}

TEST_F(TrainSummariesTest, NoRateOverLessThanASecond) {
  auto summaries = Make("first_reports", 100);
  // A job's first reports arrive together.
  summaries->OnProgress(100, 1.0, 100);
  clock_.Advance(absl::Milliseconds(3));
  summaries->OnProgress(200, 1.0, 100);
  clock_.Advance(absl::Seconds(2));
  summaries->OnProgress(300, 1.0, 100);
  ASSERT_TRUE(summaries->Close(300).ok());
  std::vector<ScalarRecord> speed = Read("global_step_per_sec");
  ASSERT_EQ(speed.size(), 1u);
  EXPECT_EQ(speed[0].step, 300);
  EXPECT_NEAR(speed[0].value, 200 / 2.003, 1e-6);
}

TEST_F(TrainSummariesTest, AJobShorterThanASecondGetsOneRateOverItsWholeTraining) {
  auto summaries = Make("short_job", 50);
  summaries->OnProgress(50, 1.0, 100);
  clock_.Advance(absl::Milliseconds(200));
  summaries->OnProgress(100, 1.0, 100);
  clock_.Advance(absl::Milliseconds(200));
  summaries->OnProgress(150, 1.0, 100);
  clock_.Advance(absl::Milliseconds(100));
  ASSERT_TRUE(summaries->Close(150).ok());
  std::vector<ScalarRecord> speed = Read("global_step_per_sec");
  ASSERT_EQ(speed.size(), 1u);
  EXPECT_EQ(speed[0].step, 150);
  EXPECT_NEAR(speed[0].value, 100 / 0.5, 1e-6);
}

TEST_F(TrainSummariesTest, CloseWithoutProgressWritesNothingAndLaterCallsAreIgnored) {
  auto summaries = Make("empty", 10);
  ASSERT_TRUE(summaries->Close(0).ok());
  summaries->OnProgress(50, 1.0, 10);
  EXPECT_TRUE(summaries->Close(60).ok());
  EXPECT_TRUE(Read("loss").empty());
}

}  // namespace
}  // namespace pstrain
