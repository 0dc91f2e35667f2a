#include "common/net/shared_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSize = 4096;

// True while `fd` is an open descriptor of this process.
bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

TEST(SharedSegmentTest, AdoptedSegmentSharesBytesBothWays) {
  absl::StatusOr<std::unique_ptr<SharedSegment>> created = SharedSegment::Create(kSize, "test");
  ASSERT_TRUE(created.ok()) << created.status();
  SharedSegment& first = **created;
  ASSERT_EQ(first.size(), kSize);
  EXPECT_EQ(first.data()[0], 0);
  EXPECT_EQ(first.data()[kSize - 1], 0);
  std::memcpy(first.data(), "hello", 5);

  absl::StatusOr<std::unique_ptr<SharedSegment>> adopted =
      SharedSegment::Adopt(::dup(first.fd()), kSize);
  ASSERT_TRUE(adopted.ok()) << adopted.status();
  SharedSegment& second = **adopted;
  ASSERT_EQ(second.size(), kSize);
  EXPECT_NE(second.data(), first.data());
  EXPECT_EQ(std::string(second.data(), 5), "hello");

  std::memcpy(second.data() + kSize - 5, "world", 5);
  EXPECT_EQ(std::string(first.data() + kSize - 5, 5), "world");
}

TEST(SharedSegmentTest, SealsStopTruncationAndFurtherSeals) {
  absl::StatusOr<std::unique_ptr<SharedSegment>> segment = SharedSegment::Create(kSize, "sealed");
  ASSERT_TRUE(segment.ok()) << segment.status();
  const int fd = (*segment)->fd();

  EXPECT_EQ(::ftruncate(fd, kSize / 2), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(::ftruncate(fd, kSize * 2), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), -1);
  EXPECT_EQ(errno, EPERM);

  struct stat info;
  ASSERT_EQ(::fstat(fd, &info), 0);
  EXPECT_EQ(info.st_size, kSize);
  const int seals = ::fcntl(fd, F_GET_SEALS);
  EXPECT_EQ(seals, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
}

TEST(SharedSegmentTest, CreateRefusesNonPositiveSizes) {
  EXPECT_EQ(SharedSegment::Create(0, "empty").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SharedSegment::Create(-1, "negative").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SharedSegmentTest, CreateAcceptsAnOverlongDebugName) {
  absl::StatusOr<std::unique_ptr<SharedSegment>> segment =
      SharedSegment::Create(kSize, std::string(1000, 'n'));
  EXPECT_TRUE(segment.ok()) << segment.status();
}

TEST(SharedSegmentTest, AdoptRefusesAMemfdWithoutSeals) {
  const int fd = ::memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::ftruncate(fd, kSize), 0);

  absl::StatusOr<std::unique_ptr<SharedSegment>> adopted = SharedSegment::Adopt(fd, kSize);
  EXPECT_EQ(adopted.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(adopted.status().message(),
              HasSubstr("the segment is not sealed against shrinking and growing"));
  EXPECT_FALSE(IsOpen(fd));
}

TEST(SharedSegmentTest, AdoptRefusesAMemfdThatCanStillShrink) {
  const int fd = ::memfd_create("grow-sealed-only", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::ftruncate(fd, kSize), 0);
  ASSERT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_GROW), 0);

  EXPECT_EQ(SharedSegment::Adopt(fd, kSize).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SharedSegmentTest, AdoptRefusesARegularFile) {
  const char* test_tmpdir = std::getenv("TEST_TMPDIR");
  std::string path =
      absl::StrCat(test_tmpdir != nullptr ? test_tmpdir : "/tmp", "/shared_segment_test_XXXXXX");
  const int fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::unlink(path.c_str());
  ASSERT_EQ(::ftruncate(fd, kSize), 0);

  EXPECT_EQ(SharedSegment::Adopt(fd, kSize).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(IsOpen(fd));
}

TEST(SharedSegmentTest, AdoptRefusesABadDescriptor) {
  EXPECT_EQ(SharedSegment::Adopt(-1, kSize).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SharedSegmentTest, AdoptRefusesASegmentLargerThanTheLimit) {
  absl::StatusOr<std::unique_ptr<SharedSegment>> segment = SharedSegment::Create(kSize, "large");
  ASSERT_TRUE(segment.ok()) << segment.status();
  const int copy = ::dup((*segment)->fd());

  absl::StatusOr<std::unique_ptr<SharedSegment>> adopted = SharedSegment::Adopt(copy, kSize - 1);
  EXPECT_EQ(adopted.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(adopted.status().message(), HasSubstr("4096"));
  EXPECT_THAT(adopted.status().message(), HasSubstr("4095"));
  EXPECT_FALSE(IsOpen(copy));
}

TEST(SharedSegmentTest, AdoptRefusesAnEmptySegment) {
  const int fd = ::memfd_create("empty", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);

  EXPECT_EQ(SharedSegment::Adopt(fd, kSize).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SharedSegmentTest, AdoptRefusesAReadOnlyDescriptor) {
  absl::StatusOr<std::unique_ptr<SharedSegment>> segment = SharedSegment::Create(kSize, "ro");
  ASSERT_TRUE(segment.ok()) << segment.status();
  // Reopening through /proc gives a new open file description of the same
  // memfd, here without write access.
  const int read_only =
      ::open(absl::StrCat("/proc/self/fd/", (*segment)->fd()).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(read_only, 0) << std::strerror(errno);

  EXPECT_EQ(SharedSegment::Adopt(read_only, kSize).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(IsOpen(read_only));
}

}  // namespace
}  // namespace pstrain
