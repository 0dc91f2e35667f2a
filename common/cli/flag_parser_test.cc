#include "common/cli/flag_parser.h"

#include "gflags/gflags.h"
#include "gtest/gtest.h"

DEFINE_int32(test_workers, 2, "workers");
DEFINE_bool(test_progress, true, "progress");
DEFINE_string(test_output, "text", "output");

namespace pstrain {
namespace {

class FlagParserTest : public testing::Test {
 protected:
  void TearDown() override {
    FLAGS_test_workers = 2;
    FLAGS_test_progress = true;
    FLAGS_test_output = "text";
  }
};

TEST_F(FlagParserTest, SetsFlagsInEveryFormAndKeepsPositionalArguments) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags(
      {"local", "--test_workers", "3", "job.pbtxt", "-test_output=json", "--notest_progress"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->positional, (std::vector<std::string>{"local", "job.pbtxt"}));
  EXPECT_EQ(FLAGS_test_workers, 3);
  EXPECT_EQ(FLAGS_test_output, "json");
  EXPECT_FALSE(FLAGS_test_progress);
  EXPECT_EQ(parsed->flags_set,
            (std::vector<std::string>{"test_workers", "test_output", "test_progress"}));
  EXPECT_FALSE(parsed->help);
}

TEST_F(FlagParserTest, NoDashTurnsABoolFlagOff) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags({"watch", "--no-test_progress"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(FLAGS_test_progress);
  EXPECT_EQ(parsed->flags_set, std::vector<std::string>{"test_progress"});
  // Only bool flags have a negated form.
  EXPECT_FALSE(ParseFlags({"--no-test_workers"}).ok());
}

TEST_F(FlagParserTest, ABoolFlagDoesNotTakeTheNextArgument) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags({"--test_progress", "status"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(FLAGS_test_progress);
  EXPECT_EQ(parsed->positional, std::vector<std::string>{"status"});
}

TEST_F(FlagParserTest, EverythingAfterDoubleDashIsPositional) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags({"status", "--", "--test_workers=5"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->positional, (std::vector<std::string>{"status", "--test_workers=5"}));
  EXPECT_EQ(FLAGS_test_workers, 2);
}

TEST_F(FlagParserTest, HelpIsReportedNotSet) {
  absl::StatusOr<ParsedArgs> parsed = ParseFlags({"submit", "--help"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->help);
  EXPECT_TRUE(ParseFlags({"-h"})->help);
  EXPECT_TRUE(ParseFlags({"--helpfull"})->helpfull);
  EXPECT_TRUE(ParseFlags({"--version"})->version);
  EXPECT_TRUE(ParseFlags({"help", "--markdown"})->markdown);
  EXPECT_TRUE(ParseFlags({"help", "--markdown"})->flags_set.empty());
}

TEST_F(FlagParserTest, AnOldSpellingSetsTheNewFlagWithANotice) {
  const std::vector<RenamedFlag> renamed = {{"test_out", "test_output"},
                                            {"test_bar", "test_progress"}};
  absl::StatusOr<ParsedArgs> parsed =
      ParseFlags({"report", "--test_out=json", "--notest_bar"}, renamed);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(FLAGS_test_output, "json");
  EXPECT_FALSE(FLAGS_test_progress);
  EXPECT_EQ(parsed->flags_set, (std::vector<std::string>{"test_output", "test_progress"}));
  EXPECT_EQ(parsed->deprecation_notices,
            (std::vector<std::string>{"--test_out is deprecated; use --test_output",
                                      "--test_bar is deprecated; use --test_progress"}));
  // The new spelling is silent.
  parsed = ParseFlags({"--test_output=text"}, renamed);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->deprecation_notices.empty());
}

TEST_F(FlagParserTest, ErrorsNameTheFlag) {
  EXPECT_EQ(ParseFlags({"--no_such_flag=1"}).status().message(), "unknown flag --no_such_flag");
  EXPECT_EQ(ParseFlags({"--test_workers=many"}).status().message(),
            "--test_workers: 'many' is not a valid int32");
  EXPECT_EQ(ParseFlags({"--test_workers"}).status().message(),
            "--test_workers needs a value (--test_workers=VALUE)");
  EXPECT_EQ(ParseFlags({"--test_progress=maybe"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
