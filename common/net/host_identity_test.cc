#include "common/net/host_identity.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::MatchesRegex;

// Runs `prepare` (if given) and LocalHostIdentity in a child process and
// returns what the child computed, "error: ..." if it failed, or "skip: ..."
// if `prepare` failed.
std::string IdentityInChild(bool (*prepare)(std::string* why)) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return std::string("error: pipe: ") + std::strerror(errno);
  const pid_t child = ::fork();
  if (child < 0) return std::string("error: fork: ") + std::strerror(errno);
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string result;
    std::string why;
    if (prepare != nullptr && !prepare(&why)) {
      result = "skip: " + why;
    } else {
      absl::StatusOr<std::string> identity = LocalHostIdentity();
      result = identity.ok() ? *identity : "error: " + identity.status().ToString();
    }
    const ssize_t written = ::write(pipe_fds[1], result.data(), result.size());
    ::_exit(written == static_cast<ssize_t>(result.size()) ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string result;
  char buffer[256];
  ssize_t count;
  while ((count = ::read(pipe_fds[0], buffer, sizeof(buffer))) != 0) {
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) break;
    result.append(buffer, static_cast<size_t>(count));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "error: the child failed";
  return result;
}

TEST(HostIdentityTest, IsABootIdAndANamespaceInode) {
  absl::StatusOr<std::string> identity = LocalHostIdentity();
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_THAT(*identity, MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                                      "[0-9a-f]{12}:[0-9]+"));
}

TEST(HostIdentityTest, IsStable) {
  absl::StatusOr<std::string> first = LocalHostIdentity();
  absl::StatusOr<std::string> second = LocalHostIdentity();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, *second);
}

TEST(HostIdentityTest, ChildInTheSameNamespaceGetsTheSameIdentity) {
  absl::StatusOr<std::string> parent = LocalHostIdentity();
  ASSERT_TRUE(parent.ok()) << parent.status();
  EXPECT_EQ(IdentityInChild(nullptr), *parent);
}

bool EnterNewNetworkNamespace(std::string* why) {
  if (::unshare(CLONE_NEWNET) == 0) return true;
  // Without CAP_SYS_ADMIN, a new user namespace grants it, where allowed.
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) return true;
  *why = std::string("unshare: ") + std::strerror(errno);
  return false;
}

TEST(HostIdentityTest, ChildInAnotherNetworkNamespaceGetsAnotherIdentity) {
  absl::StatusOr<std::string> parent = LocalHostIdentity();
  ASSERT_TRUE(parent.ok()) << parent.status();
  const std::string child = IdentityInChild(&EnterNewNetworkNamespace);
  if (child.rfind("skip: ", 0) == 0) GTEST_SKIP() << "cannot make a network namespace: " << child;
  ASSERT_EQ(child.rfind("error: ", 0), std::string::npos) << child;
  EXPECT_NE(child, *parent);
  // Same kernel: the boot id part is shared.
  EXPECT_EQ(child.substr(0, 37), parent->substr(0, 37));
}

}  // namespace
}  // namespace pstrain
