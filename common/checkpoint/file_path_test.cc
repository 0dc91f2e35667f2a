#include "common/checkpoint/file_path.h"

#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(FilePathTest, JoinPath) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("/", "b"), "/b");
}

TEST(FilePathTest, Basename) {
  EXPECT_EQ(Basename("a/b"), "b");
  EXPECT_EQ(Basename("a/b/"), "b");
  EXPECT_EQ(Basename("a"), "a");
  EXPECT_EQ(Basename("/"), "");
}

TEST(FilePathTest, Dirname) {
  EXPECT_EQ(Dirname("a/b"), "a");
  EXPECT_EQ(Dirname("a/b/"), "a");
  EXPECT_EQ(Dirname("a//b"), "a");
  EXPECT_EQ(Dirname("b"), ".");
  EXPECT_EQ(Dirname("/b"), "/");
  EXPECT_EQ(Dirname("/x/y/ckpt-5"), "/x/y");
}

TEST(FilePathTest, IsPlainFileName) {
  EXPECT_TRUE(IsPlainFileName("shard-00000-of-00002"));
  EXPECT_TRUE(IsPlainFileName(".hidden"));
  EXPECT_FALSE(IsPlainFileName(""));
  EXPECT_FALSE(IsPlainFileName("."));
  EXPECT_FALSE(IsPlainFileName(".."));
  EXPECT_FALSE(IsPlainFileName("a/b"));
  EXPECT_FALSE(IsPlainFileName(std::string("a\0b", 3)));
}

TEST(FilePathTest, IsPathUnder) {
  EXPECT_TRUE(IsPathUnder("/a/b", "/a"));
  EXPECT_TRUE(IsPathUnder("/a/b", "/a/"));
  EXPECT_TRUE(IsPathUnder("/a", "/a"));
  EXPECT_TRUE(IsPathUnder("/a/", "/a"));
  EXPECT_TRUE(IsPathUnder("/a", "/"));
  EXPECT_FALSE(IsPathUnder("/ab", "/a"));
  EXPECT_FALSE(IsPathUnder("/", "/a"));
  EXPECT_FALSE(IsPathUnder("a", "/"));
  EXPECT_FALSE(IsPathUnder("/a", ""));
}

}  // namespace
}  // namespace pstrain
