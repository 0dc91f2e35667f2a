#include "client/task_log_reader.h"

#include "common/checkpoint/memory_env.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

absl::Time At(int hour, int minute, int second, int micros) {
  return absl::FromCivil(absl::CivilSecond(2026, 12, 7, hour, minute, second),
                         absl::UTCTimeZone()) +
         absl::Microseconds(micros);
}

TEST(GlogLineTimeTest, ReadsThePrefixOfEverySeverity) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  EXPECT_EQ(GlogLineTime("I20261207 04:15:00.123456  1234 coordinator.cc:12] job a queued", utc),
            At(4, 15, 0, 123456));
  EXPECT_EQ(GlogLineTime("E20261207 23:59:59.000001 9 x.cc:1] failed", utc), At(23, 59, 59, 1));
  EXPECT_EQ(GlogLineTime("W20261207 00:00:00.000000 9 x.cc:1] w", utc), At(0, 0, 0, 0));
}

TEST(GlogLineTimeTest, ALineWithoutThePrefixHasNoTime) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  EXPECT_EQ(GlogLineTime("", utc), std::nullopt);
  EXPECT_EQ(GlogLineTime("---- ps/1 (pid 42) exited with signal 9; restarted ----", utc),
            std::nullopt);
  EXPECT_EQ(GlogLineTime("  continued message", utc), std::nullopt);
  EXPECT_EQ(GlogLineTime("I1207 04:15:00.123456  1234 x.cc:1] no year", utc), std::nullopt);
  EXPECT_EQ(GlogLineTime("Information 04:15:00 and more words here", utc), std::nullopt);
  EXPECT_EQ(GlogLineTime("I20261307 04:15:00.123456 1 x.cc:1] month 13", utc), std::nullopt);
}

class TaskLogReaderTest : public testing::Test {
 protected:
  MemoryEnv env_;
  const std::string path_ = "/run/worker-0.log";
  TaskLogReader reader_{env_, path_, absl::UTCTimeZone()};
};

TEST_F(TaskLogReaderTest, AFileNotThereYetHasNoLines) {
  absl::StatusOr<std::vector<LogLine>> lines = reader_.ReadNewLines();
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_TRUE(lines->empty());
}

TEST_F(TaskLogReaderTest, ReturnsOnlyWholeNewLinesEachWithItsTime) {
  env_.PutFile(path_,
               "I20261207 04:15:00.000001 1 a.cc:1] first\n"
               "  its second line\n"
               "I20261207 04:15:01.000002 1 a.cc:2] sec");
  absl::StatusOr<std::vector<LogLine>> lines = reader_.ReadNewLines();
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0].text, "I20261207 04:15:00.000001 1 a.cc:1] first");
  EXPECT_EQ((*lines)[0].time, At(4, 15, 0, 1));
  // A continuation takes the time of the line it continues.
  EXPECT_EQ((*lines)[1].text, "  its second line");
  EXPECT_EQ((*lines)[1].time, At(4, 15, 0, 1));

  // The half-written line comes once its end is there, and only once.
  ASSERT_TRUE(env_.AppendTo(path_, "ond\n").ok());
  lines = reader_.ReadNewLines();
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 1u);
  EXPECT_EQ((*lines)[0].text, "I20261207 04:15:01.000002 1 a.cc:2] second");
  EXPECT_EQ((*lines)[0].time, At(4, 15, 1, 2));
  lines = reader_.ReadNewLines();
  ASSERT_TRUE(lines.ok());
  EXPECT_TRUE(lines->empty());
}

TEST_F(TaskLogReaderTest, ALineBeforeAnyTimeIsInThePast) {
  env_.PutFile(path_, "---- worker/0 added again ----\n");
  absl::StatusOr<std::vector<LogLine>> lines = reader_.ReadNewLines();
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 1u);
  EXPECT_EQ((*lines)[0].time, absl::InfinitePast());
}

TEST_F(TaskLogReaderTest, AFileThatShrankIsReadAgainFromItsStart) {
  env_.PutFile(path_, "I20261207 04:15:00.000001 1 a.cc:1] an earlier cluster's long line\n");
  ASSERT_TRUE(reader_.ReadNewLines().ok());
  env_.PutFile(path_, "I20261207 05:00:00.000000 1 a.cc:1] new\n");
  absl::StatusOr<std::vector<LogLine>> lines = reader_.ReadNewLines();
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 1u);
  EXPECT_EQ((*lines)[0].text, "I20261207 05:00:00.000000 1 a.cc:1] new");
}

}  // namespace
}  // namespace pstrain
