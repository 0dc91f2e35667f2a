#include "common/checkpoint/test_checkpoints.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/checkpoint/checkpoint_writer.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/whole_file.h"
#include "common/status/status_macros.h"
#include "gtest/gtest.h"

namespace pstrain {

std::string NewTestDir(Env& env) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name =
      test == nullptr ? "no-test"
                      : absl::StrReplaceAll(
                            absl::StrCat(test->test_suite_name(), ".", test->name()), {{"/", "_"}});
  const std::string dir = JoinPath(::testing::TempDir(), name);
  absl::Status removed = RemoveTree(env, dir);
  EXPECT_TRUE(removed.ok() || absl::IsNotFound(removed)) << removed;
  const absl::Status created = CreateDirs(env, dir);
  EXPECT_TRUE(created.ok()) << created;
  return dir;
}

std::string TestShardContents(int64_t step, int shard_index) {
  std::string contents;
  for (int i = 0; i < 512; ++i) absl::StrAppend(&contents, step, ":", shard_index, ":", i, ";");
  return contents;
}

absl::Status WriteTestFile(Env& env, const std::string& path, const std::string& contents) {
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, env.NewWritableFile(path));
  RETURN_IF_ERROR(file->Append(contents));
  return file->Close();
}

absl::StatusOr<CheckpointManifest> WriteTestCheckpoint(Env& env, const std::string& model_dir,
                                                       int64_t step, int num_shards, bool final) {
  ASSIGN_OR_RETURN(const PendingCheckpoint pending, BeginCheckpoint(env, model_dir, step));
  CheckpointManifest manifest;
  manifest.set_job_id("job");
  manifest.set_final(final);
  manifest.mutable_data_position()->set_epoch(1);
  manifest.mutable_spec()->set_name("test-job");
  for (int i = 0; i < num_shards; ++i) {
    const std::string contents = TestShardContents(step, i);
    RETURN_IF_ERROR(WriteTestFile(env, pending.ShardPath(i, num_shards), contents));
    CheckpointShardFile* shard = manifest.add_shards();
    shard->set_name(std::string(Basename(pending.ShardPath(i, num_shards))));
    shard->set_shard_index(i);
  }
  return CommitCheckpoint(env, pending, manifest);
}

absl::Status FlipBit(Env& env, const std::string& path, int64_t offset, int bit) {
  ASSIGN_OR_RETURN(std::string contents, ReadWholeFile(env, path, int64_t{1} << 30));
  if (offset < 0 || offset >= static_cast<int64_t>(contents.size())) {
    return absl::OutOfRangeError(absl::StrCat(path, ": no byte at offset ", offset));
  }
  contents[offset] = static_cast<char>(contents[offset] ^ (1 << bit));
  return WriteTestFile(env, path, contents);
}

}  // namespace pstrain
