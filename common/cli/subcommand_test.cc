#include "common/cli/subcommand.h"

#include "gflags/gflags.h"
#include "gtest/gtest.h"

DEFINE_int32(test_shards, 1, "test: shards to start");
DEFINE_string(test_format, "text", "test: text | json, to <dir>");

namespace pstrain {
namespace {

class SubcommandTest : public testing::Test {
 protected:
  SubcommandTest() {
    commands_ = {
        {"start",
         "JOB",
         "start a job",
         "Starts JOB.\n\nExample:\n  prog start job.pbtxt",
         {"test_shards"},
         [this](const std::vector<std::string>& args) {
           ran_with_ = args;
           return 0;
         }},
        {"show",
         "",
         "show things",
         "Shows things.",
         {"test_format"},
         [](const std::vector<std::string>&) { return 1; }},
        {"version",
         "",
         "print the version",
         "Prints the version.",
         {},
         [this](const std::vector<std::string>& args) {
           ran_version_ = true;
           return args.empty() ? 0 : 2;
         }},
    };
  }
  void TearDown() override {
    FLAGS_test_shards = 1;
    FLAGS_test_format = "text";
  }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "prog");
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    return RunSubcommands("prog", "prog: does things.", commands_, argv.size(), argv.data());
  }

  std::vector<Subcommand> commands_;
  std::vector<std::string> ran_with_;
  bool ran_version_ = false;
};

TEST_F(SubcommandTest, RunsTheNamedCommandWithItsArgumentsAndFlags) {
  EXPECT_EQ(Run({"--test_shards=2", "start", "job.pbtxt"}), 0);
  EXPECT_EQ(ran_with_, std::vector<std::string>{"job.pbtxt"});
  EXPECT_EQ(FLAGS_test_shards, 2);
  EXPECT_EQ(Run({"show"}), 1);
}

TEST_F(SubcommandTest, UsageErrorsExitTwo) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(Run({}), kUsageErrorExitCode);
  EXPECT_EQ(Run({"launch"}), kUsageErrorExitCode);
  EXPECT_EQ(Run({"start", "--bogus"}), kUsageErrorExitCode);
  EXPECT_EQ(Run({"show", "--test_shards=3"}), kUsageErrorExitCode);
  EXPECT_EQ(Run({"help", "launch"}), kUsageErrorExitCode);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("prog: no command given"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown command 'launch' (commands: start, show, version;"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("prog start: unknown flag --bogus (see prog start --help)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("prog show: --test_shards does not apply to this command"),
            std::string::npos)
      << err;
  EXPECT_TRUE(ran_with_.empty());
}

TEST_F(SubcommandTest, HelpOfACommandShowsItsUsageFlagsAndExample) {
  const std::string help = FormatSubcommandHelp("prog", commands_[0]);
  EXPECT_NE(help.find("Usage: prog start JOB [--flags]"), std::string::npos) << help;
  EXPECT_NE(help.find("Example:\n  prog start job.pbtxt"), std::string::npos) << help;
  EXPECT_NE(help.find("--test_shards=N\n      test: shards to start (default: 1)"),
            std::string::npos)
      << help;
  EXPECT_EQ(help.find("--test_format"), std::string::npos) << help;

  testing::internal::CaptureStdout();
  EXPECT_EQ(Run({"start", "--help"}), 0);
  EXPECT_EQ(Run({"help", "start"}), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, help + help);
  EXPECT_TRUE(ran_with_.empty());
}

TEST_F(SubcommandTest, ProgramHelpListsEveryCommand) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(Run({"--help"}), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("prog: does things."), std::string::npos) << out;
  EXPECT_NE(out.find("  start JOB\n      start a job"), std::string::npos) << out;
  EXPECT_NE(out.find("  show\n      show things"), std::string::npos) << out;
}

TEST_F(SubcommandTest, VersionFlagRunsTheVersionCommand) {
  EXPECT_EQ(Run({"--version"}), 0);
  EXPECT_TRUE(ran_version_);
  EXPECT_TRUE(ran_with_.empty());
}

TEST_F(SubcommandTest, VersionFlagIsAUsageErrorWithoutAVersionCommand) {
  commands_.pop_back();
  testing::internal::CaptureStderr();
  EXPECT_EQ(Run({"--version"}), kUsageErrorExitCode);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("prog: unknown flag --version"), std::string::npos) << err;
}

TEST_F(SubcommandTest, MarkdownReferenceHasEveryCommandAndFlagWithCellsEscaped) {
  const std::string markdown = FormatMarkdownReference("prog", commands_);
  EXPECT_EQ(markdown,
            "### `prog start JOB`\n\nstart a job.\n\n"
            "| flag | default | meaning |\n|---|---|---|\n"
            "| `--test_shards=N` | `1` | test: shards to start |\n"
            "\n### `prog show`\n\nshow things.\n\n"
            "| flag | default | meaning |\n|---|---|---|\n"
            "| `--test_format=STRING` | `\"text\"` | test: text \\| json, to &lt;dir&gt; |\n"
            "\n### `prog version`\n\nprint the version.\n\nNo flags.\n");
  testing::internal::CaptureStdout();
  EXPECT_EQ(Run({"help", "--markdown"}), 0);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), markdown);
  testing::internal::CaptureStderr();
  EXPECT_EQ(Run({"help", "start", "--markdown"}), kUsageErrorExitCode);
  EXPECT_EQ(Run({"start", "--markdown"}), kUsageErrorExitCode);
  testing::internal::GetCapturedStderr();
}

}  // namespace
}  // namespace pstrain
