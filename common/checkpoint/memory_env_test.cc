#include "common/checkpoint/memory_env.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/checkpoint/shard_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

TEST(MemoryEnvTest, FilesAndFoldersBehaveAsOnAFilesystem) {
  MemoryEnv env;
  EXPECT_TRUE(absl::IsNotFound(env.NewWritableFile("/a/f").status()));
  ASSERT_TRUE(CreateDirs(env, "/a/b").ok());
  EXPECT_TRUE(absl::IsAlreadyExists(env.CreateDir("/a")));

  auto file = env.NewWritableFile("/a/f");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("hello ").ok());
  ASSERT_TRUE((*file)->Append("world").ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition((*file)->Append("!")));
  EXPECT_EQ(env.Stat("/a/f")->size, 11);
  EXPECT_TRUE(env.Stat("/a/b")->is_directory);
  EXPECT_THAT(*env.ListDir("/a"), UnorderedElementsAre("b", "f"));

  std::string read(5, '\0');
  ASSERT_TRUE(ReadFileRange(env, "/a/f", 6, &read).ok());
  EXPECT_EQ(read, "world");

  ASSERT_TRUE(env.Rename("/a/f", "/a/b/g").ok());
  EXPECT_TRUE(absl::IsNotFound(env.Stat("/a/f").status()));
  EXPECT_EQ(*env.Contents("/a/b/g"), "hello world");
  EXPECT_TRUE(absl::IsFailedPrecondition(env.RemoveDir("/a/b")));
  ASSERT_TRUE(RemoveTree(env, "/a").ok());
  EXPECT_THAT(*env.ListDir("/"), ElementsAre());
}

TEST(MemoryEnvTest, AShardFileWrittenThereReadsBackAndTravelsAsBytes) {
  MemoryEnv env;
  auto writer = ShardFileWriter::Create(env, "/state/shard");
  ASSERT_TRUE(writer.ok()) << writer.status();
  ShardFileHeader header;
  header.job_id = "job-1";
  header.num_shards = 1;
  header.version = 9;
  header.optimizer = "sgd";
  header.num_variables = 1;
  ASSERT_TRUE((*writer)->WriteHeader(header).ok());
  ShardFileVariable v;
  v.name = "w";
  v.kind = VARIABLE_KIND_DENSE;
  v.dims = {3};
  v.num_elements = 3;
  const std::vector<float> values = {1, 2, 3};
  ASSERT_TRUE((*writer)->WriteDenseVariable(v, values, {}).ok());
  ASSERT_TRUE((*writer)->WriteDedupState("dedup").ok());
  auto info = (*writer)->Commit();
  ASSERT_TRUE(info.ok()) << info.status();

  // The bytes, put into another Env, are the same file.
  MemoryEnv other;
  other.PutFile("/received", *env.Contents("/state/shard"));
  ShardFileExpectation expect{info->bytes, info->crc32c, true};
  auto reader = ShardFileReader::Open(other, "/received", expect);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->get()->header().version, 9);
  std::vector<float> out(3);
  reader->get()->CopyDense(0, 0, out.data());
  EXPECT_EQ(out, values);

  // One byte changed is found.
  std::string damaged = *env.Contents("/state/shard");
  damaged[damaged.size() / 2] ^= 1;
  other.PutFile("/received", damaged);
  EXPECT_TRUE(absl::IsDataLoss(ShardFileReader::Open(other, "/received", expect).status()));
}

}  // namespace
}  // namespace pstrain
