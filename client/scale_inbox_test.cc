#include "client/scale_inbox.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// How long any wait of these tests may take; each ends far sooner.
constexpr absl::Duration kDeadline = absl::Seconds(30);

class ScaleInboxTest : public testing::Test {
 protected:
  void SetUp() override {
    // Each test has its own pointer folder, under its own $TMPDIR.
    const testing::TestInfo* test = testing::UnitTest::GetInstance()->current_test_info();
    root_ = absl::StrCat(testing::TempDir(), "/", test->name());
    ::mkdir(root_.c_str(), 0755);
    ::setenv("TMPDIR", root_.c_str(), 1);
  }

  std::string NewRunDir(const std::string& name) {
    const std::string run_dir = absl::StrCat(root_, "/", name);
    ::mkdir(run_dir.c_str(), 0755);
    return run_dir;
  }

  std::string root_;
};

// A pid that no process has any more.
int EndedPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

TEST_F(ScaleInboxTest, ARequestIsTakenAndItsSenderGetsTheAnswer) {
  const std::string run_dir = NewRunDir("run");
  absl::StatusOr<std::unique_ptr<ScaleInbox>> inbox = ScaleInbox::Open(run_dir);
  ASSERT_TRUE(inbox.ok()) << inbox.status();
  absl::StatusOr<ScaleAnswer> answer;
  std::thread sender([&] { answer = SendScaleRequest(run_dir, {3, absl::Seconds(5)}, kDeadline); });
  std::vector<ScaleInbox::Received> received;
  for (absl::Time deadline = absl::Now() + kDeadline; received.empty() && absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(20))) {
    received = (*inbox)->Take();
  }
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].requester, ::getpid());
  ASSERT_TRUE(received[0].request.ok()) << received[0].request.status();
  EXPECT_EQ(received[0].request->workers, 3);
  EXPECT_EQ(received[0].request->grace, absl::Seconds(5));
  EXPECT_TRUE((*inbox)->Take().empty()) << "a request is taken once";
  ScaleAnswer reply;
  reply.workers = 3;
  reply.changes = {"worker/2 joined: ..."};
  ASSERT_TRUE((*inbox)->Answer(received[0].requester, reply).ok());
  sender.join();
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->workers, 3);
  EXPECT_EQ(answer->changes, reply.changes);
}

TEST_F(ScaleInboxTest, ARequestThatCannotBeReadIsTakenWithWhy) {
  const std::string run_dir = NewRunDir("run");
  absl::StatusOr<std::unique_ptr<ScaleInbox>> inbox = ScaleInbox::Open(run_dir);
  ASSERT_TRUE(inbox.ok()) << inbox.status();
  std::ofstream(run_dir + "/scale/request-77") << "workers=0\n";
  std::vector<ScaleInbox::Received> received = (*inbox)->Take();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].requester, 77);
  EXPECT_EQ(received[0].request.status().message(),
            "scale request: a cluster needs at least 1 worker, asked for 0");
}

TEST_F(ScaleInboxTest, WithoutAPstrainLocalThereIsNoOneToAsk) {
  const std::string run_dir = NewRunDir("idle");
  absl::StatusOr<ScaleAnswer> answer = SendScaleRequest(run_dir, {2}, kDeadline);
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(answer.status().message().find("no pstrain local runs with run folder " + run_dir),
            std::string::npos)
      << answer.status();
  absl::StatusOr<std::string> found = FindRunningLocalCluster();
  EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(found.status().message().find("no pstrain local of this user is running"),
            std::string::npos)
      << found.status();
}

TEST_F(ScaleInboxTest, TheOneRunningClusterIsFoundAndSeveralAreRefused) {
  const std::string first = NewRunDir("first");
  const std::string second = NewRunDir("second");
  {
    absl::StatusOr<std::unique_ptr<ScaleInbox>> one = ScaleInbox::Open(first);
    ASSERT_TRUE(one.ok()) << one.status();
    absl::StatusOr<std::string> found = FindRunningLocalCluster();
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(*found, first);

    absl::StatusOr<std::unique_ptr<ScaleInbox>> two = ScaleInbox::Open(second);
    ASSERT_TRUE(two.ok()) << two.status();
    found = FindRunningLocalCluster();
    EXPECT_EQ(found.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(found.status().message(),
              absl::StrCat("2 pstrain local clusters are running; say which with --run_dir: ",
                           first, ", ", second));
  }
  // Both withdrew their pointers when they ended.
  EXPECT_EQ(FindRunningLocalCluster().status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(SendScaleRequest(first, {2}, kDeadline).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ScaleInboxTest, APointerLeftByAKilledPstrainLocalIsIgnored) {
  const std::string run_dir = NewRunDir("run");
  absl::StatusOr<std::unique_ptr<ScaleInbox>> inbox = ScaleInbox::Open(run_dir);
  ASSERT_TRUE(inbox.ok()) << inbox.status();
  const std::string stale =
      absl::StrCat(root_, "/pstrain-local-", ::getuid(), "/", EndedPid(), "-1");
  std::ofstream(stale) << root_ << "/gone\n";
  absl::StatusOr<std::string> found = FindRunningLocalCluster();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, run_dir);
  EXPECT_FALSE(std::ifstream(stale).good()) << "the stale pointer is removed";
}

TEST_F(ScaleInboxTest, APstrainLocalThatEndsBeforeAnsweringIsNamed) {
  const std::string run_dir = NewRunDir("run");
  // Another process owns the run folder, takes the request and ends
  // without answering, as `pstrain local` killed meanwhile would.
  const pid_t owner = ::fork();
  if (owner == 0) {
    absl::StatusOr<std::unique_ptr<ScaleInbox>> inbox = ScaleInbox::Open(run_dir);
    if (!inbox.ok()) ::_exit(1);
    for (absl::Time deadline = absl::Now() + kDeadline; absl::Now() < deadline;
         absl::SleepFor(absl::Milliseconds(20))) {
      if (!(*inbox)->Take().empty()) ::_exit(0);
    }
    ::_exit(2);
  }
  ASSERT_GT(owner, 0);
  // The folder is its while it runs.
  absl::Status refused;
  for (absl::Time deadline = absl::Now() + kDeadline; absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(20))) {
    if (!std::ifstream(run_dir + "/scale/owner").good()) continue;
    refused = ScaleInbox::Open(run_dir).status();
    break;
  }
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  EXPECT_EQ(refused.message(),
            absl::StrCat("another pstrain local (pid ", owner, ") runs with run folder ", run_dir));

  // Reaped as it ends: a zombie still counts as running.
  int status = 0;
  std::thread reaper([&] { ::waitpid(owner, &status, 0); });
  absl::StatusOr<ScaleAnswer> answer = SendScaleRequest(run_dir, {2}, kDeadline);
  reaper.join();
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnavailable) << answer.status();
  EXPECT_EQ(answer.status().message(),
            absl::StrCat("pstrain local (pid ", owner, ") ended before it answered"));
}

}  // namespace
}  // namespace pstrain
