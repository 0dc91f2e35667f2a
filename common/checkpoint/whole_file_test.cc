#include "common/checkpoint/whole_file.h"

#include <string>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/test_env.h"
#include "common/checksum/crc32c.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

TEST(WholeFileTest, WriteFileAtomicallyCreatesAndReplaces) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  const std::string path = dir + "/f";
  ASSERT_TRUE(WriteFileAtomically(env, path, "first").ok());
  EXPECT_EQ(*ReadWholeFile(env, path, 100), "first");
  ASSERT_TRUE(WriteFileAtomically(env, path, "second, longer").ok());
  EXPECT_EQ(*ReadWholeFile(env, path, 100), "second, longer");
  EXPECT_FALSE(*PathExists(env, AtomicWriteTemporaryPath(path)));
}

TEST(WholeFileTest, FailedWriteLeavesTheOldFileAndNoTemporary) {
  PosixEnv posix;
  TestEnv env(&posix);
  const std::string dir = NewTestDir(env);
  const std::string path = dir + "/f";
  ASSERT_TRUE(WriteFileAtomically(env, path, "old").ok());

  env.FailOn(EnvOp::kSync, "/f.tmp", absl::ResourceExhaustedError("disk full"));
  const absl::Status status = WriteFileAtomically(env, path, "new");
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_EQ(*ReadWholeFile(env, path, 100), "old");
  EXPECT_FALSE(*PathExists(env, AtomicWriteTemporaryPath(path)));
}

TEST(WholeFileTest, FailedRenameLeavesTheOldFile) {
  PosixEnv posix;
  TestEnv env(&posix);
  const std::string dir = NewTestDir(env);
  const std::string path = dir + "/f";
  ASSERT_TRUE(WriteFileAtomically(env, path, "old").ok());
  env.FailOn(EnvOp::kRename, "/f.tmp", absl::InternalError("rename failed"));
  EXPECT_FALSE(WriteFileAtomically(env, path, "new").ok());
  EXPECT_EQ(*ReadWholeFile(env, path, 100), "old");
  EXPECT_FALSE(*PathExists(env, AtomicWriteTemporaryPath(path)));
}

TEST(WholeFileTest, ReadWholeFileRefusesFilesOverTheCap) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  const std::string path = dir + "/big";
  ASSERT_TRUE(WriteTestFile(env, path, std::string(3 << 20, 'b')).ok());
  EXPECT_EQ(ReadWholeFile(env, path, 3 << 20)->size(), size_t{3} << 20);
  const absl::StatusOr<std::string> capped = ReadWholeFile(env, path, (3 << 20) - 1);
  ASSERT_TRUE(absl::IsResourceExhausted(capped.status())) << capped.status();
  EXPECT_THAT(capped.status().message(), HasSubstr(path));
  EXPECT_TRUE(absl::IsNotFound(ReadWholeFile(env, dir + "/none", 10).status()));
}

// The read buffer grows from 4 KiB to 1 MiB: every size around its steps
// reads back whole and exact.
TEST(WholeFileTest, ReadWholeFileReadsFilesOfEverySizeWhole) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097},
                      size_t{12288}, size_t{(1 << 20) + 3}, size_t{(3 << 20) + 7}}) {
    std::string contents(size, '\0');
    for (size_t i = 0; i < size; ++i) contents[i] = static_cast<char>((i * 131 + size) % 251);
    const std::string path = dir + "/f" + std::to_string(size);
    ASSERT_TRUE(WriteFileAtomically(env, path, contents).ok());
    absl::StatusOr<std::string> read = ReadWholeFile(env, path, static_cast<int64_t>(size));
    ASSERT_TRUE(read.ok()) << size << ": " << read.status();
    EXPECT_TRUE(*read == contents) << "size " << size << " read back " << read->size();
    if (size > 0) {
      EXPECT_TRUE(absl::IsResourceExhausted(
          ReadWholeFile(env, path, static_cast<int64_t>(size) - 1).status()))
          << size;
    }
  }
}

TEST(WholeFileTest, ChecksumFileMatchesCrc32cOfTheContents) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  std::string contents;
  for (int i = 0; i < (3 << 20) + 17; ++i) contents.push_back(static_cast<char>(i * 131));
  ASSERT_TRUE(WriteTestFile(env, dir + "/f", contents).ok());
  const absl::StatusOr<FileChecksum> sum = ChecksumFile(env, dir + "/f");
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_EQ(sum->bytes, static_cast<int64_t>(contents.size()));
  EXPECT_EQ(sum->crc32c, Crc32c(contents));

  ASSERT_TRUE(WriteTestFile(env, dir + "/empty", "").ok());
  EXPECT_EQ(ChecksumFile(env, dir + "/empty")->bytes, 0);
  EXPECT_EQ(ChecksumFile(env, dir + "/empty")->crc32c, 0u);
}

}  // namespace
}  // namespace pstrain
