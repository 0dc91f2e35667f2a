#include "common/checkpoint/posix_env.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::string ReadAll(Env& env, const std::string& path) {
  absl::StatusOr<std::unique_ptr<SequentialFile>> file = env.NewSequentialFile(path);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return "";
  std::string contents;
  char scratch[7];  // small, so reads come in several pieces
  for (;;) {
    absl::StatusOr<absl::string_view> piece = (*file)->Read(sizeof(scratch), scratch);
    EXPECT_TRUE(piece.ok()) << piece.status();
    if (!piece.ok() || piece->empty()) break;
    contents.append(piece->data(), piece->size());
  }
  return contents;
}

TEST(PosixEnvTest, WritesAppendsAndReads) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  const std::string path = dir + "/a";
  {
    absl::StatusOr<std::unique_ptr<WritableFile>> file = env.NewWritableFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append("hello ").ok());
    ASSERT_TRUE((*file)->Append(std::string(100000, 'x')).ok());  // larger than the buffer
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE((*file)->Close().ok());
    EXPECT_TRUE(absl::IsFailedPrecondition((*file)->Append("late")));
  }
  EXPECT_EQ(ReadAll(env, path), "hello " + std::string(100000, 'x'));
  {
    absl::StatusOr<std::unique_ptr<WritableFile>> file = env.NewAppendableFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append("!").ok());
    // Destroyed without Close: the buffered byte still reaches the file.
  }
  absl::StatusOr<FileInfo> info = env.Stat(path);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->is_directory);
  EXPECT_EQ(info->size, 6 + 100000 + 1);

  ASSERT_TRUE(env.TruncateFile(path, 5).ok());
  EXPECT_EQ(ReadAll(env, path), "hello");
  // NewWritableFile truncates.
  ASSERT_TRUE(WriteTestFile(env, path, "new").ok());
  EXPECT_EQ(ReadAll(env, path), "new");
}

TEST(PosixEnvTest, ReadFileRangeReadsTheRangeOrSaysWhereTheFileEnds) {
  PosixEnv env;
  const std::string path = testing::TempDir() + "/range";
  {
    absl::StatusOr<std::unique_ptr<WritableFile>> file = env.NewWritableFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append("0123456789").ok());
    ASSERT_TRUE((*file)->Close().ok());
  }
  std::string range(4, '\0');
  ASSERT_TRUE(ReadFileRange(env, path, 3, &range).ok());
  EXPECT_EQ(range, "3456");
  std::string past(5, '\0');
  const absl::Status short_read = ReadFileRange(env, path, 8, &past);
  EXPECT_TRUE(absl::IsDataLoss(short_read)) << short_read;
  EXPECT_THAT(short_read.message(), HasSubstr("range: ends at offset 10, before the 5 bytes"));
  EXPECT_TRUE(absl::IsNotFound(ReadFileRange(env, path + "-none", 0, &range)));
}

TEST(PosixEnvTest, FoldersRenamesAndRemovals) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  ASSERT_TRUE(CreateDirs(env, dir + "/x/y/z").ok());
  ASSERT_TRUE(CreateDirs(env, dir + "/x/y/z").ok());  // already there: fine
  EXPECT_TRUE(absl::IsAlreadyExists(env.CreateDir(dir + "/x")));
  ASSERT_TRUE(WriteTestFile(env, dir + "/x/f", "1").ok());
  ASSERT_TRUE(WriteTestFile(env, dir + "/x/y/g", "2").ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(CreateDirs(env, dir + "/x/f/sub")));

  absl::StatusOr<std::vector<std::string>> names = env.ListDir(dir + "/x");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, UnorderedElementsAre("f", "y"));

  ASSERT_TRUE(env.Rename(dir + "/x/f", dir + "/x/h").ok());
  EXPECT_FALSE(*PathExists(env, dir + "/x/f"));
  EXPECT_EQ(ReadAll(env, dir + "/x/h"), "1");
  ASSERT_TRUE(env.SyncDir(dir + "/x").ok());

  EXPECT_TRUE(absl::IsFailedPrecondition(env.RemoveDir(dir + "/x")));  // not empty
  ASSERT_TRUE(RemoveTree(env, dir + "/x").ok());
  EXPECT_FALSE(*PathExists(env, dir + "/x"));
  EXPECT_TRUE(absl::IsNotFound(RemoveTree(env, dir + "/x")));
}

TEST(PosixEnvTest, SetAsideDamagedKeepsEveryDamagedCopyUnderItsOwnName) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  const std::string checkpoint = dir + "/ckpt-400";
  ASSERT_TRUE(CreateDirs(env, checkpoint).ok());
  EXPECT_EQ(SetAsideDamaged(env, checkpoint).value_or(""), checkpoint + ".damaged");
  ASSERT_TRUE(CreateDirs(env, checkpoint).ok());
  EXPECT_EQ(SetAsideDamaged(env, checkpoint).value_or(""), checkpoint + ".damaged-2");
  EXPECT_FALSE(*PathExists(env, checkpoint));
  EXPECT_TRUE(*PathExists(env, checkpoint + ".damaged"));

  const absl::StatusOr<std::string> missing = SetAsideDamaged(env, dir + "/ckpt-600");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              AllOf(HasSubstr("cannot move the damaged " + dir + "/ckpt-600 aside"),
                    HasSubstr("remove it by hand")));
}

TEST(PosixEnvTest, ErrorsNameThePathAndFollowErrno) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  const std::string missing = dir + "/missing";
  absl::StatusOr<std::unique_ptr<SequentialFile>> file = env.NewSequentialFile(missing);
  ASSERT_TRUE(absl::IsNotFound(file.status())) << file.status();
  EXPECT_THAT(file.status().message(), HasSubstr(missing));
  EXPECT_TRUE(absl::IsNotFound(env.Stat(missing).status()));
  EXPECT_TRUE(absl::IsNotFound(env.ListDir(missing).status()));
  EXPECT_TRUE(absl::IsNotFound(env.RemoveFile(missing)));
  EXPECT_TRUE(absl::IsNotFound(env.Rename(missing, dir + "/b")));
  EXPECT_TRUE(absl::IsNotFound(env.NewWritableFile(missing + "/sub").status()));

  EXPECT_TRUE(absl::IsNotFound(PosixError("p", "x", ENOENT)));
  EXPECT_TRUE(absl::IsPermissionDenied(PosixError("p", "x", EACCES)));
  EXPECT_TRUE(absl::IsResourceExhausted(PosixError("p", "x", ENOSPC)));
  EXPECT_TRUE(absl::IsDataLoss(PosixError("p", "x", EIO)));
  EXPECT_EQ(PosixError("/a/b", "open", ENOENT).message(),
            "/a/b: open failed: No such file or directory");
}

TEST(PosixEnvTest, RemoveTreeRemovesSymlinksWithoutFollowing) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  ASSERT_TRUE(CreateDirs(env, dir + "/kept").ok());
  ASSERT_TRUE(WriteTestFile(env, dir + "/kept/file", "keep me").ok());
  ASSERT_TRUE(CreateDirs(env, dir + "/doomed").ok());
  ASSERT_EQ(::symlink((dir + "/kept").c_str(), (dir + "/doomed/link").c_str()), 0);

  absl::StatusOr<FileInfo> link = env.Stat(dir + "/doomed/link");
  ASSERT_TRUE(link.ok()) << link.status();
  EXPECT_TRUE(link->is_symlink);
  EXPECT_TRUE(link->is_directory);

  ASSERT_TRUE(RemoveTree(env, dir + "/doomed").ok());
  EXPECT_FALSE(*PathExists(env, dir + "/doomed"));
  EXPECT_TRUE(*PathExists(env, dir + "/kept/file"));
}

TEST(PosixEnvTest, ResolveExistingPartFollowsTheLinksOfTheDeepestExistingAncestor) {
  PosixEnv env;
  const std::string dir = NewTestDir(env);
  ASSERT_TRUE(CreateDirs(env, dir + "/root/inside").ok());
  ASSERT_TRUE(CreateDirs(env, dir + "/outside").ok());
  ASSERT_EQ(::symlink((dir + "/outside").c_str(), (dir + "/root/escape").c_str()), 0);
  ASSERT_EQ(::symlink((dir + "/root/inside").c_str(), (dir + "/root/alias").c_str()), 0);
  ASSERT_EQ(::symlink((dir + "/nothing").c_str(), (dir + "/root/dangling").c_str()), 0);
  absl::StatusOr<std::string> real_dir = env.RealPath(dir);
  ASSERT_TRUE(real_dir.ok()) << real_dir.status();

  // Existing, and below an existing folder as written.
  EXPECT_EQ(*ResolveExistingPart(env, dir + "/root/inside"), *real_dir + "/root/inside");
  EXPECT_EQ(*ResolveExistingPart(env, dir + "/root/new/m/"), *real_dir + "/root/new/m");
  EXPECT_EQ(*ResolveExistingPart(env, dir + "/root/./new/../m"), *real_dir + "/root/m");
  // Through links, wherever they lead.
  EXPECT_EQ(*ResolveExistingPart(env, dir + "/root/alias/m"), *real_dir + "/root/inside/m");
  EXPECT_EQ(*ResolveExistingPart(env, dir + "/root/escape"), *real_dir + "/outside");
  EXPECT_EQ(*ResolveExistingPart(env, dir + "/root/escape/a/b"), *real_dir + "/outside/a/b");

  absl::StatusOr<std::string> dangling = ResolveExistingPart(env, dir + "/root/dangling/m");
  EXPECT_EQ(dangling.status().code(), absl::StatusCode::kInvalidArgument) << dangling.status();
  EXPECT_THAT(dangling.status().message(), HasSubstr("root/dangling is a symlink to nothing"));
  EXPECT_EQ(ResolveExistingPart(env, "relative/m").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(env.RealPath(dir + "/none").status().code(), absl::StatusCode::kNotFound);
}

TEST(PosixEnvTest, NowIsTheSystemClock) {
  PosixEnv env;
  const absl::Time before = absl::Now();
  const absl::Time now = env.Now();
  EXPECT_GE(now, before);
  EXPECT_LE(now, absl::Now());
}

}  // namespace
}  // namespace pstrain
