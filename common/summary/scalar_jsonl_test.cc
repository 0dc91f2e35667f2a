#include "common/summary/scalar_jsonl.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/whole_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ScalarJsonlTest, FormatsOneObjectPerLine) {
  EXPECT_EQ(FormatScalarJsonLine(ScalarRecord{1200, 1700000000.25, "loss", 0.3125}),
            "{\"step\":1200,\"wall_time\":1700000000.25,\"tag\":\"loss\",\"value\":0.3125}\n");
  EXPECT_EQ(FormatScalarJsonLine(ScalarRecord{-1, 0, "a\"b\\c\n", 0.1}),
            "{\"step\":-1,\"wall_time\":0,\"tag\":\"a\\\"b\\\\c\\u000a\",\"value\":0.1}\n");
  EXPECT_EQ(FormatScalarJsonLine(ScalarRecord{1, 2, "x", std::numeric_limits<double>::quiet_NaN()}),
            "{\"step\":1,\"wall_time\":2,\"tag\":\"x\",\"value\":\"NaN\"}\n");
  EXPECT_EQ(FormatScalarJsonLine(ScalarRecord{1, 2, "x", -INFINITY}),
            "{\"step\":1,\"wall_time\":2,\"tag\":\"x\",\"value\":\"-Infinity\"}\n");
}

TEST(ScalarJsonlTest, RoundTripsExactly) {
  const std::vector<ScalarRecord> records = {
      {0, 1700000000.123456, "loss", 2.302585092994046},
      {9007199254740992, 1e-300, "eval/accuracy", 0.8437},
      {7, 1.5, "tag with \"quotes\" and \\ and \t", -1e308},
      {8, 1.5, "inf", std::numeric_limits<double>::infinity()},
      {9, 1.5, "lr", 1e-5f},
  };
  for (const ScalarRecord& record : records) {
    std::string line = FormatScalarJsonLine(record);
    ASSERT_EQ(line.back(), '\n');
    line.pop_back();
    const absl::StatusOr<ScalarRecord> parsed = ParseScalarJsonLine(line);
    ASSERT_TRUE(parsed.ok()) << line << ": " << parsed.status();
    EXPECT_EQ(*parsed, record) << line;
  }
  const absl::StatusOr<ScalarRecord> nan =
      ParseScalarJsonLine("{\"step\":1,\"wall_time\":2,\"tag\":\"x\",\"value\":\"NaN\"}");
  ASSERT_TRUE(nan.ok()) << nan.status();
  EXPECT_TRUE(std::isnan(nan->value));
}

TEST(ScalarJsonlTest, ParseIgnoresUnknownKeysAndOrder) {
  const absl::StatusOr<ScalarRecord> parsed = ParseScalarJsonLine(
      " {\"value\": 1.5, \"tag\": \"loss\", \"extra\": [1], \"wall_time\": 3, \"step\": 4} ");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, (ScalarRecord{4, 3, "loss", 1.5}));
}

TEST(ScalarJsonlTest, ParseRefusesWhatIsNotAScalarLine) {
  for (const char* line : {
           "",
           "{\"step\":1,\"wall_time\":2,\"tag\":\"x\"",  // cut short
           "[1,2]",
           "{\"wall_time\":2,\"tag\":\"x\",\"value\":1}",               // no step
           "{\"step\":1.5,\"wall_time\":2,\"tag\":\"x\",\"value\":1}",  // fractional step
           "{\"step\":1,\"wall_time\":2,\"tag\":3,\"value\":1}",        // tag not a string
           "{\"step\":1,\"wall_time\":2,\"tag\":\"x\",\"value\":\"high\"}",
       }) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseScalarJsonLine(line).status())) << line;
  }
}

class ScalarJsonlFileTest : public ::testing::Test {
 protected:
  ScalarJsonlFileTest() : path_(NewTestDir(env_) + "/scalars.jsonl") {}

  PosixEnv env_;
  const std::string path_;
};

TEST_F(ScalarJsonlFileTest, ReadsEveryLine) {
  ASSERT_TRUE(WriteTestFile(env_, path_,
                            FormatScalarJsonLine({1, 10, "loss", 0.5}) + "\n" +
                                FormatScalarJsonLine({2, 11, "loss", 0.25}))
                  .ok());
  const absl::StatusOr<std::vector<ScalarRecord>> records = ReadScalarJsonl(env_, path_);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_THAT(*records,
              ElementsAre(ScalarRecord{1, 10, "loss", 0.5}, ScalarRecord{2, 11, "loss", 0.25}));
}

TEST_F(ScalarJsonlFileTest, DamagedLineIsDataLossNamingFileAndLine) {
  ASSERT_TRUE(WriteTestFile(env_, path_,
                            FormatScalarJsonLine({1, 10, "loss", 0.5}) + "{\"step\":2,\"wall\n" +
                                FormatScalarJsonLine({3, 12, "loss", 0.25}))
                  .ok());
  const absl::StatusOr<std::vector<ScalarRecord>> records = ReadScalarJsonl(env_, path_);
  ASSERT_TRUE(absl::IsDataLoss(records.status())) << records.status();
  EXPECT_THAT(records.status().message(), AllOf(HasSubstr(path_), HasSubstr("line 2")));
}

TEST_F(ScalarJsonlFileTest, UnfinishedLastLineCanBeToleratedOrTrimmed) {
  const std::string whole = FormatScalarJsonLine({1, 10, "loss", 0.5});
  const std::string partial = "{\"step\":2,\"wall_ti";
  ASSERT_TRUE(WriteTestFile(env_, path_, whole + partial).ok());
  EXPECT_TRUE(absl::IsDataLoss(ReadScalarJsonl(env_, path_).status()));
  ScalarJsonlReadOptions tolerant;
  tolerant.allow_truncated_tail = true;
  EXPECT_EQ(ReadScalarJsonl(env_, path_, tolerant)->size(), 1u);

  EXPECT_EQ(*TrimPartialLastLine(env_, path_), static_cast<int64_t>(partial.size()));
  EXPECT_EQ(*ReadWholeFile(env_, path_, 1000), whole);
  EXPECT_EQ(*TrimPartialLastLine(env_, path_), 0);
  EXPECT_EQ(*TrimPartialLastLine(env_, path_ + ".none"), 0);

  ASSERT_TRUE(WriteTestFile(env_, path_, "no newline at all").ok());
  EXPECT_EQ(*TrimPartialLastLine(env_, path_), 17);
  EXPECT_EQ(*ReadWholeFile(env_, path_, 1000), "");
}

}  // namespace
}  // namespace pstrain
