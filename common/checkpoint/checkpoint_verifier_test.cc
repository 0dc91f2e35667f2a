#include "common/checkpoint/checkpoint_verifier.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/test_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class CheckpointVerifierTest : public ::testing::Test {
 protected:
  CheckpointVerifierTest() : env_(&posix_) { model_dir_ = NewTestDir(env_); }

  std::string Shard(int64_t step, int index) {
    return CheckpointDir(model_dir_, step) + "/" + ShardFileName(index, 2);
  }

  PosixEnv posix_;
  TestEnv env_;
  std::string model_dir_;
};

TEST_F(CheckpointVerifierTest, GoodCheckpointVerifies) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 100, 2, /*final=*/true).ok());
  const absl::StatusOr<CheckpointManifest> manifest =
      VerifyCheckpoint(env_, CheckpointDir(model_dir_, 100));
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->global_step(), 100);
  EXPECT_TRUE(manifest->final());
}

TEST_F(CheckpointVerifierTest, TruncatedShardFileIsDataLossNamingFileAndSizes) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 100, 2).ok());
  const int64_t size = static_cast<int64_t>(TestShardContents(100, 1).size());
  ASSERT_TRUE(env_.TruncateFile(Shard(100, 1), size - 7).ok());
  const absl::StatusOr<CheckpointManifest> manifest =
      VerifyCheckpoint(env_, CheckpointDir(model_dir_, 100));
  ASSERT_TRUE(absl::IsDataLoss(manifest.status())) << manifest.status();
  EXPECT_THAT(manifest.status().message(),
              AllOf(HasSubstr(Shard(100, 1)), HasSubstr(absl::StrCat(size - 7, " bytes")),
                    HasSubstr(absl::StrCat("MANIFEST says ", size)), HasSubstr("truncated")));
}

TEST_F(CheckpointVerifierTest, BitFlippedShardFileIsDataLossNamingFileAndCrcs) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 100, 2).ok());
  ASSERT_TRUE(FlipBit(env_, Shard(100, 0), 1234, 3).ok());
  const absl::StatusOr<CheckpointManifest> manifest =
      VerifyCheckpoint(env_, CheckpointDir(model_dir_, 100));
  ASSERT_TRUE(absl::IsDataLoss(manifest.status())) << manifest.status();
  EXPECT_THAT(manifest.status().message(),
              AllOf(HasSubstr(Shard(100, 0)), HasSubstr("crc32c 0x"), HasSubstr("says 0x")));

  // Sizes alone cannot see it.
  VerifyOptions sizes_only;
  sizes_only.check_contents = false;
  EXPECT_TRUE(VerifyCheckpoint(env_, CheckpointDir(model_dir_, 100), sizes_only).ok());
}

TEST_F(CheckpointVerifierTest, MissingManifestIsNotFound) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 100, 2).ok());
  ASSERT_TRUE(env_.RemoveFile(CheckpointDir(model_dir_, 100) + "/MANIFEST").ok());
  const absl::StatusOr<CheckpointManifest> manifest =
      VerifyCheckpoint(env_, CheckpointDir(model_dir_, 100));
  ASSERT_TRUE(absl::IsNotFound(manifest.status())) << manifest.status();
  EXPECT_THAT(
      manifest.status().message(),
      AllOf(HasSubstr(CheckpointDir(model_dir_, 100) + "/MANIFEST"), HasSubstr("never completed")));
}

TEST_F(CheckpointVerifierTest, MissingShardFileIsNotFoundNamingIt) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 100, 2).ok());
  ASSERT_TRUE(env_.RemoveFile(Shard(100, 1)).ok());
  const absl::StatusOr<CheckpointManifest> manifest =
      VerifyCheckpoint(env_, CheckpointDir(model_dir_, 100));
  ASSERT_TRUE(absl::IsNotFound(manifest.status())) << manifest.status();
  EXPECT_THAT(manifest.status().message(), HasSubstr(Shard(100, 1)));
}

TEST_F(CheckpointVerifierTest, DamagedManifestIsDataLoss) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 100, 2).ok());
  ASSERT_TRUE(FlipBit(env_, CheckpointDir(model_dir_, 100) + "/MANIFEST", 10).ok());
  const absl::StatusOr<CheckpointManifest> manifest =
      VerifyCheckpoint(env_, CheckpointDir(model_dir_, 100));
  ASSERT_TRUE(absl::IsDataLoss(manifest.status())) << manifest.status();
  EXPECT_THAT(manifest.status().message(), HasSubstr("MANIFEST: checksum mismatch"));
}

TEST_F(CheckpointVerifierTest, FallsBackPastDamagedCheckpointsWithAReasonEach) {
  for (const int64_t step : {100, 200, 300, 400, 500}) {
    ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, step, 2).ok());
  }
  ASSERT_TRUE(env_.RemoveFile(CheckpointDir(model_dir_, 500) + "/MANIFEST").ok());
  ASSERT_TRUE(FlipBit(env_, Shard(400, 1), 5).ok());
  ASSERT_TRUE(env_.TruncateFile(Shard(300, 0), 10).ok());
  // 100 is damaged too, but older than the newest good one: never looked at.
  ASSERT_TRUE(FlipBit(env_, Shard(100, 0), 5).ok());

  const absl::StatusOr<RestorableCheckpointSearch> search =
      FindRestorableCheckpoint(env_, model_dir_);
  ASSERT_TRUE(search.ok()) << search.status();
  ASSERT_TRUE(search->checkpoint.has_value());
  EXPECT_EQ(search->checkpoint->step, 200);
  EXPECT_EQ(search->checkpoint->path, CheckpointDir(model_dir_, 200));
  EXPECT_EQ(search->checkpoint->manifest.global_step(), 200);

  ASSERT_EQ(search->skipped.size(), 3u);
  EXPECT_EQ(search->skipped[0].step, 500);
  EXPECT_TRUE(absl::IsNotFound(search->skipped[0].reason));
  EXPECT_THAT(search->skipped[0].reason.message(), HasSubstr("MANIFEST"));
  EXPECT_EQ(search->skipped[1].step, 400);
  EXPECT_TRUE(absl::IsDataLoss(search->skipped[1].reason));
  EXPECT_THAT(search->skipped[1].reason.message(), HasSubstr(Shard(400, 1)));
  EXPECT_EQ(search->skipped[2].step, 300);
  EXPECT_THAT(search->skipped[2].reason.message(), HasSubstr(Shard(300, 0)));
  EXPECT_EQ(search->skipped[2].path, CheckpointDir(model_dir_, 300));
}

TEST_F(CheckpointVerifierTest, NothingRestorableWhenEveryCheckpointIsDamaged) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 100, 2).ok());
  ASSERT_TRUE(FlipBit(env_, Shard(100, 0), 5).ok());
  const absl::StatusOr<RestorableCheckpointSearch> search =
      FindRestorableCheckpoint(env_, model_dir_);
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_FALSE(search->checkpoint.has_value());
  ASSERT_EQ(search->skipped.size(), 1u);
}

TEST_F(CheckpointVerifierTest, EmptyModelDirHasNothingToRestore) {
  const absl::StatusOr<RestorableCheckpointSearch> search =
      FindRestorableCheckpoint(env_, model_dir_ + "/new");
  ASSERT_TRUE(search.ok()) << search.status();
  EXPECT_FALSE(search->checkpoint.has_value());
  EXPECT_THAT(search->skipped, IsEmpty());
}

TEST_F(CheckpointVerifierTest, UnreadableCheckpointStopsTheSearchInsteadOfFallingBack) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 100, 2).ok());
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 200, 2).ok());
  env_.FailOn(EnvOp::kNewSequentialFile, "ckpt-200/shard-00001-of-00002",
              absl::PermissionDeniedError("ckpt-200/shard: permission denied"));
  const absl::StatusOr<RestorableCheckpointSearch> search =
      FindRestorableCheckpoint(env_, model_dir_);
  EXPECT_TRUE(absl::IsPermissionDenied(search.status())) << search.status();
}

}  // namespace
}  // namespace pstrain
