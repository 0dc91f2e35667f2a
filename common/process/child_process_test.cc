#include "common/process/child_process.h"

#include <signal.h>

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(ChildProcessTest, ReportsTheExitCode) {
  auto child = ChildProcess::Start({"/bin/sh", {"-c", "exit 3"}, {}, ""});
  ASSERT_TRUE(child.ok()) << child.status();
  absl::StatusOr<ExitStatus> status = (*child)->Wait(absl::Seconds(10));
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->exit_code, 3);
  EXPECT_EQ(status->ToString(), "exit code 3");
}

TEST(ChildProcessTest, PassesArgumentsEnvironmentAndCapturesOutput) {
  const std::string log = testing::TempDir() + "/child.log";
  std::remove(log.c_str());
  auto child =
      ChildProcess::Start({"/bin/sh",
                           {"-c", "echo \"$1 $PSTRAIN_TEST_VALUE\"; echo oops >&2", "sh", "hello"},
                           {"PSTRAIN_TEST_VALUE=world"},
                           log});
  ASSERT_TRUE(child.ok()) << child.status();
  ASSERT_TRUE((*child)->Wait(absl::Seconds(10))->ok());
  std::stringstream contents;
  contents << std::ifstream(log).rdbuf();
  EXPECT_EQ(contents.str(), "hello world\noops\n");
}

TEST(ChildProcessTest, StopEscalatesToSigkillAfterTheGrace) {
  // The child ignores SIGTERM, as a hung process would.
  auto child = ChildProcess::Start({"/bin/sh", {"-c", "trap '' TERM; sleep 30"}, {}, ""});
  ASSERT_TRUE(child.ok());
  EXPECT_FALSE((*child)->Poll().has_value());
  EXPECT_EQ((*child)->Wait(absl::Milliseconds(50)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  ExitStatus status = (*child)->Stop(absl::Milliseconds(200));
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_FALSE(status.ok());
}

TEST(ChildProcessTest, SigtermEndsACooperativeChild) {
  auto child = ChildProcess::Start({"/bin/sleep", {"30"}, {}, ""});
  ASSERT_TRUE(child.ok());
  ExitStatus status = (*child)->Stop(absl::Seconds(10));
  EXPECT_EQ(status.signal, SIGTERM);
}

TEST(ChildProcessTest, MissingProgramIsNotFound) {
  auto child = ChildProcess::Start({"/nonexistent/pstrain-nothing", {}, {}, ""});
  EXPECT_EQ(child.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(child.status().message().find("/nonexistent/pstrain-nothing"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
