#include "common/checkpoint/checkpoint_catalog.h"

#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_pointer.h"
#include "common/checkpoint/checkpoint_writer.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<int64_t> Steps(const std::vector<CheckpointRef>& refs) {
  std::vector<int64_t> steps;
  for (const CheckpointRef& ref : refs) steps.push_back(ref.step);
  return steps;
}

TEST(CheckpointCatalogTest, ListsCompleteCheckpointsByStep) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  // Created out of order, with steps whose names sort differently as text.
  for (const int64_t step : {1000, 200, 30}) {
    ASSERT_TRUE(WriteTestCheckpoint(env, model_dir, step, 2).ok());
  }
  // Not checkpoints: a temporary folder, a half-deleted one, a folder
  // without MANIFEST, a file with a checkpoint's name, unrelated entries.
  ASSERT_TRUE(BeginCheckpoint(env, model_dir, 2000).ok());
  ASSERT_TRUE(CreateDirs(env, model_dir + "/ckpt-3000.deleting").ok());
  ASSERT_TRUE(CreateDirs(env, model_dir + "/ckpt-4000").ok());
  ASSERT_TRUE(WriteTestFile(env, model_dir + "/ckpt-5000", "").ok());
  ASSERT_TRUE(CreateDirs(env, model_dir + "/ckpt-0600").ok());
  ASSERT_TRUE(CreateDirs(env, model_dir + "/train").ok());

  const absl::StatusOr<std::vector<CheckpointRef>> listed = ListCheckpoints(env, model_dir);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_THAT(Steps(*listed), ElementsAre(30, 200, 1000));
  EXPECT_EQ((*listed)[0].path, model_dir + "/ckpt-30");

  EXPECT_THAT(Steps(*ListCheckpointFolders(env, model_dir)), ElementsAre(30, 200, 1000, 4000));
}

TEST(CheckpointCatalogTest, MissingModelDirHoldsNoCheckpoints) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env) + "/never-created";
  EXPECT_THAT(*ListCheckpoints(env, model_dir), IsEmpty());
  EXPECT_THAT(*CollectAbandonedCheckpoints(env, model_dir), IsEmpty());
}

TEST(CheckpointCatalogTest, DeleteRemovesTheFolderAndRepointsThePointer) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  for (const int64_t step : {10, 20, 30}) {
    ASSERT_TRUE(WriteTestCheckpoint(env, model_dir, step, 2).ok());
  }
  ASSERT_EQ(*ReadCheckpointPointer(env, model_dir), 30);

  // The oldest goes; the pointer stays.
  ASSERT_TRUE(DeleteCheckpoint(env, model_dir + "/ckpt-10").ok());
  EXPECT_THAT(Steps(*ListCheckpoints(env, model_dir)), ElementsAre(20, 30));
  EXPECT_FALSE(*PathExists(env, model_dir + "/ckpt-10"));
  EXPECT_FALSE(*PathExists(env, model_dir + "/ckpt-10.deleting"));
  EXPECT_EQ(*ReadCheckpointPointer(env, model_dir), 30);

  // The newest goes; the pointer follows to the newest remaining.
  ASSERT_TRUE(DeleteCheckpoint(env, model_dir + "/ckpt-30").ok());
  EXPECT_EQ(*ReadCheckpointPointer(env, model_dir), 20);

  // The last goes; so does the pointer.
  ASSERT_TRUE(DeleteCheckpoint(env, model_dir + "/ckpt-20/").ok());
  EXPECT_THAT(*ListCheckpoints(env, model_dir), IsEmpty());
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpointPointer(env, model_dir).status()));

  EXPECT_TRUE(absl::IsNotFound(DeleteCheckpoint(env, model_dir + "/ckpt-20")));
}

TEST(CheckpointCatalogTest, DeleteRefusesAnythingButACheckpointFolder) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  ASSERT_TRUE(CreateDirs(env, model_dir + "/train").ok());
  ASSERT_TRUE(WriteTestFile(env, model_dir + "/ckpt-7", "a file").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(DeleteCheckpoint(env, model_dir + "/train")));
  EXPECT_TRUE(absl::IsInvalidArgument(DeleteCheckpoint(env, model_dir)));
  EXPECT_TRUE(absl::IsInvalidArgument(DeleteCheckpoint(env, model_dir + "/ckpt-7")));
  EXPECT_TRUE(*PathExists(env, model_dir + "/train"));
  EXPECT_TRUE(*PathExists(env, model_dir + "/ckpt-7"));
}

TEST(CheckpointCatalogTest, CollectsOnlyAbandonedFolders) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  ASSERT_TRUE(WriteTestCheckpoint(env, model_dir, 10, 1).ok());
  ASSERT_TRUE(BeginCheckpoint(env, model_dir, 20).ok());
  ASSERT_TRUE(WriteTestFile(env, model_dir + "/ckpt-20.tmp/shard-00000-of-00001", "x").ok());
  ASSERT_TRUE(CreateDirs(env, model_dir + "/ckpt-5.deleting").ok());
  ASSERT_TRUE(WriteTestFile(env, model_dir + "/checkpoint.tmp", "1").ok());
  ASSERT_TRUE(CreateDirs(env, model_dir + "/ckpt-30").ok());  // no MANIFEST: not ours to judge
  ASSERT_TRUE(CreateDirs(env, model_dir + "/eval").ok());

  const absl::StatusOr<std::vector<std::string>> removed =
      CollectAbandonedCheckpoints(env, model_dir);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_THAT(*removed, ElementsAre(model_dir + "/checkpoint.tmp", model_dir + "/ckpt-20.tmp",
                                    model_dir + "/ckpt-5.deleting"));
  EXPECT_THAT(Steps(*ListCheckpoints(env, model_dir)), ElementsAre(10));
  EXPECT_TRUE(*PathExists(env, model_dir + "/ckpt-30"));
  EXPECT_TRUE(*PathExists(env, model_dir + "/eval"));
  EXPECT_TRUE(*PathExists(env, model_dir + "/checkpoint"));
}

}  // namespace
}  // namespace pstrain
