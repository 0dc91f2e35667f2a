#include "common/process/child_process.h"

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
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

// Whether the file at `path` holds `text`, waiting up to `patience`.
bool AwaitFileContents(const std::string& path, const std::string& text, absl::Duration patience) {
  const absl::Time give_up = absl::Now() + patience;
  do {
    std::stringstream contents;
    contents << std::ifstream(path).rdbuf();
    if (contents.str() == text) return true;
    absl::SleepFor(absl::Milliseconds(5));
  } while (absl::Now() < give_up);
  return false;
}

TEST(ChildProcessTest, StopEscalatesToSigkillAfterTheGrace) {
  // The child ignores SIGTERM, as a hung process would, and says so once
  // it does: stopped before that, the shell would end at SIGTERM.
  const std::string log = testing::TempDir() + "/ignores_term.log";
  std::remove(log.c_str());
  auto child =
      ChildProcess::Start({"/bin/sh", {"-c", "trap '' TERM; echo ignoring; sleep 30"}, {}, log});
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(AwaitFileContents(log, "ignoring\n", absl::Seconds(30)));
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
