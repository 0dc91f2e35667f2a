// Crashes at each step of writing and of deleting a checkpoint, then a
// restart: what a crash leaves is either the whole checkpoint or no
// checkpoint plus garbage that is never listed and is collected.

#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_pointer.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/checkpoint_writer.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/test_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<int64_t> ListedSteps(Env& env, const std::string& model_dir) {
  const absl::StatusOr<std::vector<CheckpointRef>> refs = ListCheckpoints(env, model_dir);
  EXPECT_TRUE(refs.ok()) << refs.status();
  std::vector<int64_t> steps;
  if (refs.ok()) {
    for (const CheckpointRef& ref : *refs) steps.push_back(ref.step);
  }
  return steps;
}

struct CrashPoint {
  const char* name;
  EnvOp op;
  const char* path_suffix;
  // Whether the checkpoint of step 200 exists after the restart.
  bool committed;
};

class CommitCrashTest : public ::testing::TestWithParam<CrashPoint> {};

TEST_P(CommitCrashTest, RestartSeesAllOrNothingAndCollectsTheRest) {
  const CrashPoint& crash = GetParam();
  PosixEnv posix;
  TestEnv env(&posix);
  const std::string model_dir = NewTestDir(env) + "/model";
  ASSERT_TRUE(WriteTestCheckpoint(env, model_dir, 100, 2).ok());

  env.CrashOn(crash.op, crash.path_suffix);
  const absl::StatusOr<CheckpointManifest> written = WriteTestCheckpoint(env, model_dir, 200, 2);
  ASSERT_TRUE(env.crashed()) << "the crash point was never reached";
  // Past the rename the commit has happened, whatever the caller heard.
  if (!crash.committed) {
    EXPECT_FALSE(written.ok());
  }
  env.ClearFailures();  // the restart

  const int64_t expected_newest = crash.committed ? 200 : 100;
  if (crash.committed) {
    EXPECT_THAT(ListedSteps(env, model_dir), ElementsAre(100, 200));
  } else {
    EXPECT_THAT(ListedSteps(env, model_dir), ElementsAre(100));
  }
  const absl::StatusOr<RestorableCheckpointSearch> search =
      FindRestorableCheckpoint(env, model_dir);
  ASSERT_TRUE(search.ok()) << search.status();
  ASSERT_TRUE(search->checkpoint.has_value());
  EXPECT_EQ(search->checkpoint->step, expected_newest);
  EXPECT_THAT(search->skipped, IsEmpty());

  const absl::StatusOr<std::vector<std::string>> collected =
      CollectAbandonedCheckpoints(env, model_dir);
  ASSERT_TRUE(collected.ok()) << collected.status();
  if (crash.committed) {
    EXPECT_THAT(*collected, IsEmpty());
    // The crash came before the pointer moved: it lags, the listing does not.
    EXPECT_EQ(*ReadCheckpointPointer(env, model_dir), 100);
  } else {
    EXPECT_THAT(*collected, ElementsAre(TemporaryCheckpointDir(model_dir, 200)));
    // The step can be checkpointed again.
    ASSERT_TRUE(WriteTestCheckpoint(env, model_dir, 200, 2).ok());
    EXPECT_EQ(*ReadCheckpointPointer(env, model_dir), 200);
  }
  EXPECT_THAT(ListedSteps(env, model_dir), ElementsAre(100, 200));
}

INSTANTIATE_TEST_SUITE_P(
    CrashPoints, CommitCrashTest,
    ::testing::Values(
        CrashPoint{"WhileWritingAShard", EnvOp::kAppend, "shard-00001-of-00002", false},
        CrashPoint{"BeforeTheManifestIsSynced", EnvOp::kSync, "ckpt-200.tmp/MANIFEST.tmp", false},
        CrashPoint{"BeforeTheManifestIsRenamed", EnvOp::kRename, "ckpt-200.tmp/MANIFEST.tmp",
                   false},
        CrashPoint{"BeforeTheFolderIsRenamed", EnvOp::kRename, "ckpt-200.tmp", false},
        // From here on the checkpoint exists.
        CrashPoint{"BeforeModelDirIsSynced", EnvOp::kSyncDir, "/model", true},
        CrashPoint{"BeforeThePointerIsWritten", EnvOp::kNewWritableFile, "checkpoint.tmp", true}),
    [](const ::testing::TestParamInfo<CrashPoint>& info) { return info.param.name; });

TEST(CheckpointCrashTest, PointerLeftBehindByACrashIsOnlyAHint) {
  PosixEnv posix;
  TestEnv env(&posix);
  const std::string model_dir = NewTestDir(env);
  ASSERT_TRUE(WriteTestCheckpoint(env, model_dir, 100, 1).ok());
  env.CrashOn(EnvOp::kRename, "checkpoint.tmp");
  (void)WriteTestCheckpoint(env, model_dir, 200, 1);
  ASSERT_TRUE(env.crashed());
  env.ClearFailures();
  EXPECT_EQ(*ReadCheckpointPointer(env, model_dir), 100);
  EXPECT_THAT(ListedSteps(env, model_dir), ElementsAre(100, 200));
  EXPECT_THAT(*CollectAbandonedCheckpoints(env, model_dir),
              ElementsAre(model_dir + "/checkpoint.tmp"));
}

TEST(CheckpointCrashTest, CrashWhileDeletingLeavesNoHalfCheckpoint) {
  PosixEnv posix;
  TestEnv env(&posix);
  const std::string model_dir = NewTestDir(env);
  for (const int64_t step : {100, 200}) {
    ASSERT_TRUE(WriteTestCheckpoint(env, model_dir, step, 2).ok());
  }
  // Dies after removing one of the two shard files.
  env.CrashOn(EnvOp::kRemoveFile, "ckpt-100.deleting/shard-00001-of-00002");
  EXPECT_FALSE(DeleteCheckpoint(env, CheckpointDir(model_dir, 100)).ok());
  env.ClearFailures();

  EXPECT_THAT(ListedSteps(env, model_dir), ElementsAre(200));
  EXPECT_THAT(*ListCheckpointFolders(env, model_dir), ::testing::SizeIs(1));
  EXPECT_THAT(*CollectAbandonedCheckpoints(env, model_dir),
              ElementsAre(DeletingCheckpointDir(model_dir, 100)));
  EXPECT_FALSE(*PathExists(env, DeletingCheckpointDir(model_dir, 100)));
}

TEST(CheckpointCrashTest, CrashBeforeTheDeletingRenameKeepsTheWholeCheckpoint) {
  PosixEnv posix;
  TestEnv env(&posix);
  const std::string model_dir = NewTestDir(env);
  ASSERT_TRUE(WriteTestCheckpoint(env, model_dir, 100, 2).ok());
  env.CrashOn(EnvOp::kRename, "ckpt-100");
  EXPECT_FALSE(DeleteCheckpoint(env, CheckpointDir(model_dir, 100)).ok());
  env.ClearFailures();
  EXPECT_THAT(ListedSteps(env, model_dir), ElementsAre(100));
  EXPECT_TRUE(VerifyCheckpoint(env, CheckpointDir(model_dir, 100)).ok());
}

}  // namespace
}  // namespace pstrain
