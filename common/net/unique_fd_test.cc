#include "common/net/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

int NewDescriptor() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

TEST(UniqueFdTest, DefaultOwnsNothing) {
  UniqueFd fd;
  EXPECT_FALSE(fd.valid());
  EXPECT_EQ(fd.get(), -1);
}

TEST(UniqueFdTest, ClosesWhenDestroyed) {
  const int raw = NewDescriptor();
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    EXPECT_TRUE(fd.valid());
    EXPECT_EQ(fd.get(), raw);
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, MoveTransfersOwnership) {
  const int raw = NewDescriptor();
  ASSERT_GE(raw, 0);
  UniqueFd first(raw);
  UniqueFd second(std::move(first));
  EXPECT_FALSE(first.valid());
  EXPECT_EQ(second.get(), raw);

  const int other = NewDescriptor();
  ASSERT_GE(other, 0);
  UniqueFd third(other);
  third = std::move(second);
  EXPECT_FALSE(IsOpen(other));
  EXPECT_EQ(third.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
}

TEST(UniqueFdTest, ReleaseKeepsTheDescriptorOpen) {
  const int raw = NewDescriptor();
  ASSERT_GE(raw, 0);
  UniqueFd fd(raw);
  EXPECT_EQ(fd.release(), raw);
  EXPECT_FALSE(fd.valid());
  EXPECT_TRUE(IsOpen(raw));
  ::close(raw);
}

TEST(UniqueFdTest, ResetClosesTheOldDescriptor) {
  const int first = NewDescriptor();
  const int second = NewDescriptor();
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  UniqueFd fd(first);
  fd.reset(second);
  EXPECT_FALSE(IsOpen(first));
  EXPECT_EQ(fd.get(), second);
  fd.reset();
  EXPECT_FALSE(IsOpen(second));
  EXPECT_FALSE(fd.valid());
}

}  // namespace
}  // namespace pstrain
