#include "server/coordinator/summary_events.h"

#include <string>
#include <vector>

#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/summary/scalar_jsonl.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

std::string Lines(const std::vector<ScalarRecord>& records) {
  std::string lines;
  for (const ScalarRecord& record : records) lines += FormatScalarJsonLine(record);
  return lines;
}

class SummaryEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_dir_ = NewTestDir(env_);
    ASSERT_TRUE(env_.CreateDir(JoinPath(model_dir_, "train")).ok());
    ASSERT_TRUE(env_.CreateDir(JoinPath(model_dir_, "eval")).ok());
  }

  void Write(const std::string& folder, const std::string& contents) {
    ASSERT_TRUE(
        WriteTestFile(env_, JoinPath(JoinPath(model_dir_, folder), "scalars.jsonl"), contents)
            .ok());
  }

  PosixEnv env_;
  std::string model_dir_;
};

TEST_F(SummaryEventsTest, TrainingStepsAndEvaluationsBecomeEventsInTheOrderTheyHappened) {
  ASSERT_NO_FATAL_FAILURE(Write("train", Lines({{100, 10.0, "loss", 0.9},
                                                {100, 10.0, "learning_rate", 0.001},
                                                {100, 10.0, "examples_per_sec", 5000},
                                                {100, 10.0, "global_step_per_sec", 40},
                                                {200, 12.0, "loss", 0.5},
                                                {200, 12.0, "learning_rate", 0.0009}})));
  ASSERT_NO_FATAL_FAILURE(
      Write("eval", Lines({{150, 11.0, "accuracy", 0.81}, {150, 11.0, "loss", 0.6}})));
  const std::vector<JobEvent> events = EventsFromSummaries(env_, model_dir_);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].unix_ms(), 10000);
  EXPECT_EQ(events[0].progress().global_step(), 100);
  EXPECT_EQ(events[0].progress().loss(), 0.9);
  EXPECT_EQ(events[0].progress().learning_rate(), 0.001);
  EXPECT_EQ(events[0].progress().examples_per_sec(), 5000);
  EXPECT_EQ(events[1].eval().checkpoint_step(), 150);
  EXPECT_EQ(events[1].eval().metrics().at("accuracy"), 0.81);
  EXPECT_EQ(events[1].eval().metrics().at("loss"), 0.6);
  EXPECT_EQ(events[2].progress().global_step(), 200);
  EXPECT_EQ(events[2].progress().loss(), 0.5);
}

TEST_F(SummaryEventsTest, NoFilesGiveNoEventsAndAHalfWrittenLineIsIgnored) {
  EXPECT_TRUE(EventsFromSummaries(env_, model_dir_).empty());
  EXPECT_TRUE(EventsFromSummaries(env_, JoinPath(model_dir_, "absent")).empty());
  ASSERT_NO_FATAL_FAILURE(
      Write("train", Lines({{100, 10.0, "loss", 0.9}}) + "{\"step\":200,\"wall_ti"));
  const std::vector<JobEvent> events = EventsFromSummaries(env_, model_dir_);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].progress().global_step(), 100);
}

TEST_F(SummaryEventsTest, AnUnreadableFileIsSkipped) {
  ASSERT_NO_FATAL_FAILURE(Write("train", "not json\n"));
  ASSERT_NO_FATAL_FAILURE(Write("eval", Lines({{150, 11.0, "accuracy", 0.81}})));
  const std::vector<JobEvent> events = EventsFromSummaries(env_, model_dir_);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].has_eval());
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
