#include "common/checkpoint/checkpoint_writer.h"

#include <string>
#include <vector>

#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_pointer.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/test_env.h"
#include "common/checksum/crc32c.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

class CheckpointWriterTest : public ::testing::Test {
 protected:
  CheckpointWriterTest() : env_(&posix_, absl::FromUnixMillis(1700000000456)) {
    model_dir_ = NewTestDir(env_) + "/model";
  }

  // Begins a checkpoint and writes two shard files into it; returns the
  // manifest the shards would report (sizes and CRCs filled when `report`).
  CheckpointManifest BeginWithShards(int64_t step, bool report, PendingCheckpoint* pending) {
    absl::StatusOr<PendingCheckpoint> begun = BeginCheckpoint(env_, model_dir_, step);
    EXPECT_TRUE(begun.ok()) << begun.status();
    *pending = *begun;
    CheckpointManifest manifest;
    manifest.set_job_id("job-1");
    for (int i = 0; i < 2; ++i) {
      const std::string contents = TestShardContents(step, i);
      EXPECT_TRUE(WriteTestFile(env_, pending->ShardPath(i, 2), contents).ok());
      CheckpointShardFile* shard = manifest.add_shards();
      shard->set_name(ShardFileName(i, 2));
      shard->set_shard_index(i);
      if (report) {
        shard->set_bytes(static_cast<int64_t>(contents.size()));
        shard->set_crc32c(Crc32c(contents));
      }
    }
    return manifest;
  }

  PosixEnv posix_;
  TestEnv env_;
  std::string model_dir_;
};

TEST_F(CheckpointWriterTest, RoundTrip) {
  PendingCheckpoint pending;
  CheckpointManifest manifest = BeginWithShards(1200, /*report=*/true, &pending);
  EXPECT_EQ(pending.temporary_dir, model_dir_ + "/ckpt-1200.tmp");
  EXPECT_EQ(pending.final_dir, model_dir_ + "/ckpt-1200");
  EXPECT_EQ(pending.ShardPath(1, 2), model_dir_ + "/ckpt-1200.tmp/shard-00001-of-00002");
  manifest.mutable_data_position()->set_epoch(2);
  manifest.mutable_data_position()->add_finished()->set_end(64);
  manifest.mutable_spec()->set_name("mlp");
  manifest.set_final(true);

  // Not a checkpoint until committed.
  EXPECT_TRUE(ListCheckpoints(env_, model_dir_)->empty());

  const absl::StatusOr<CheckpointManifest> committed = CommitCheckpoint(env_, pending, manifest);
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->format_version(), kManifestFormatVersion);
  EXPECT_EQ(committed->global_step(), 1200);
  EXPECT_EQ(committed->created_unix_ms(), 1700000000456);

  const std::vector<CheckpointRef> listed = *ListCheckpoints(env_, model_dir_);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].step, 1200);
  EXPECT_EQ(listed[0].path, model_dir_ + "/ckpt-1200");
  EXPECT_FALSE(*PathExists(env_, pending.temporary_dir));
  EXPECT_EQ(*ReadCheckpointPointer(env_, model_dir_), 1200);

  const absl::StatusOr<CheckpointManifest> verified = VerifyCheckpoint(env_, listed[0].path);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->job_id(), "job-1");
  EXPECT_EQ(verified->data_position().epoch(), 2);
  EXPECT_EQ(verified->data_position().finished(0).end(), 64);
  EXPECT_EQ(verified->spec().name(), "mlp");
  EXPECT_TRUE(verified->final());
  ASSERT_EQ(verified->shards_size(), 2);
  EXPECT_EQ(verified->shards(1).bytes(), static_cast<int64_t>(TestShardContents(1200, 1).size()));
  EXPECT_EQ(verified->shards(1).crc32c(), Crc32c(TestShardContents(1200, 1)));
}

TEST_F(CheckpointWriterTest, FillsInSizesAndChecksumsTheShardsDidNotReport) {
  PendingCheckpoint pending;
  const CheckpointManifest manifest = BeginWithShards(5, /*report=*/false, &pending);
  const absl::StatusOr<CheckpointManifest> committed = CommitCheckpoint(env_, pending, manifest);
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->shards(0).crc32c(), Crc32c(TestShardContents(5, 0)));
  EXPECT_TRUE(VerifyCheckpoint(env_, pending.final_dir).ok());
}

TEST_F(CheckpointWriterTest, ShardFileUnlikeItsReportIsRefused) {
  PendingCheckpoint pending;
  CheckpointManifest manifest = BeginWithShards(5, /*report=*/true, &pending);
  manifest.mutable_shards(1)->set_crc32c(manifest.shards(1).crc32c() ^ 1);
  const absl::StatusOr<CheckpointManifest> committed = CommitCheckpoint(env_, pending, manifest);
  ASSERT_TRUE(absl::IsDataLoss(committed.status())) << committed.status();
  EXPECT_THAT(committed.status().message(), HasSubstr("ckpt-5.tmp/shard-00001-of-00002"));
  EXPECT_THAT(committed.status().message(), HasSubstr("crc32c"));
  // Nothing was published; the caller abandons the attempt.
  EXPECT_TRUE(ListCheckpoints(env_, model_dir_)->empty());
  EXPECT_TRUE(AbandonCheckpoint(env_, pending).ok());
  EXPECT_FALSE(*PathExists(env_, pending.temporary_dir));
  EXPECT_TRUE(AbandonCheckpoint(env_, pending).ok());
}

TEST_F(CheckpointWriterTest, ShortShardFileIsRefused) {
  PendingCheckpoint pending;
  CheckpointManifest manifest = BeginWithShards(5, /*report=*/true, &pending);
  manifest.mutable_shards(0)->set_bytes(manifest.shards(0).bytes() + 10);
  const absl::StatusOr<CheckpointManifest> committed = CommitCheckpoint(env_, pending, manifest);
  ASSERT_TRUE(absl::IsDataLoss(committed.status())) << committed.status();
  EXPECT_THAT(committed.status().message(), HasSubstr("shard-00000-of-00002"));
}

TEST_F(CheckpointWriterTest, MissingShardFileIsNotFound) {
  PendingCheckpoint pending;
  CheckpointManifest manifest = BeginWithShards(5, /*report=*/false, &pending);
  ASSERT_TRUE(env_.RemoveFile(pending.ShardPath(1, 2)).ok());
  const absl::StatusOr<CheckpointManifest> committed = CommitCheckpoint(env_, pending, manifest);
  ASSERT_TRUE(absl::IsNotFound(committed.status())) << committed.status();
  EXPECT_THAT(committed.status().message(), HasSubstr("shard-00001-of-00002"));
  EXPECT_TRUE(ListCheckpoints(env_, model_dir_)->empty());
}

TEST_F(CheckpointWriterTest, InvalidShardListsAreRefused) {
  PendingCheckpoint pending;
  const CheckpointManifest good = BeginWithShards(5, /*report=*/false, &pending);
  CheckpointManifest none = good;
  none.clear_shards();
  CheckpointManifest twice = good;
  twice.mutable_shards(1)->set_name(good.shards(0).name());
  CheckpointManifest gap = good;
  gap.mutable_shards(1)->set_shard_index(2);
  CheckpointManifest escaping = good;
  escaping.mutable_shards(1)->set_name("../x");
  CheckpointManifest manifest_name = good;
  manifest_name.mutable_shards(1)->set_name("MANIFEST");
  CheckpointManifest wrong_step = good;
  wrong_step.set_global_step(6);
  for (const CheckpointManifest& bad : {none, twice, gap, escaping, manifest_name, wrong_step}) {
    const absl::StatusOr<CheckpointManifest> committed = CommitCheckpoint(env_, pending, bad);
    EXPECT_TRUE(absl::IsInvalidArgument(committed.status())) << committed.status();
  }
  EXPECT_TRUE(CommitCheckpoint(env_, pending, good).ok());
}

TEST_F(CheckpointWriterTest, BeginRefusesAnExistingCheckpointAndBadArguments) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 5, 1).ok());
  const absl::StatusOr<PendingCheckpoint> again = BeginCheckpoint(env_, model_dir_, 5);
  ASSERT_TRUE(absl::IsAlreadyExists(again.status())) << again.status();
  EXPECT_THAT(again.status().message(), HasSubstr(model_dir_ + "/ckpt-5"));
  EXPECT_TRUE(absl::IsInvalidArgument(BeginCheckpoint(env_, model_dir_, -1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(BeginCheckpoint(env_, "", 1).status()));
}

TEST_F(CheckpointWriterTest, BeginClearsATemporaryFolderOfAnEarlierAttempt) {
  PendingCheckpoint first;
  BeginWithShards(7, /*report=*/false, &first);
  ASSERT_TRUE(WriteTestFile(env_, first.temporary_dir + "/stray", "x").ok());

  PendingCheckpoint second;
  const CheckpointManifest manifest = BeginWithShards(7, /*report=*/false, &second);
  EXPECT_FALSE(*PathExists(env_, second.temporary_dir + "/stray"));
  ASSERT_TRUE(CommitCheckpoint(env_, second, manifest).ok());
}

TEST_F(CheckpointWriterTest, APendingCheckpointMovesToTheStepItsShardsHold) {
  PendingCheckpoint pending;
  const CheckpointManifest manifest = BeginWithShards(200, /*report=*/true, &pending);
  ASSERT_TRUE(RenamePendingCheckpoint(env_, pending, 203).ok());
  EXPECT_EQ(pending.step, 203);
  EXPECT_EQ(pending.final_dir, model_dir_ + "/ckpt-203");
  EXPECT_FALSE(*PathExists(env_, model_dir_ + "/ckpt-200.tmp"));
  const absl::StatusOr<CheckpointManifest> committed = CommitCheckpoint(env_, pending, manifest);
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(committed->global_step(), 203);
  const std::vector<CheckpointRef> listed = *ListCheckpoints(env_, model_dir_);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].step, 203);
  EXPECT_TRUE(VerifyCheckpoint(env_, listed[0].path).ok());
}

TEST_F(CheckpointWriterTest, APendingCheckpointDoesNotMoveOntoAnExistingOne) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, model_dir_, 203, 1).ok());
  PendingCheckpoint pending;
  const CheckpointManifest manifest = BeginWithShards(200, /*report=*/true, &pending);
  const absl::Status moved = RenamePendingCheckpoint(env_, pending, 203);
  EXPECT_TRUE(absl::IsAlreadyExists(moved)) << moved;
  EXPECT_TRUE(absl::IsInvalidArgument(RenamePendingCheckpoint(env_, pending, -1)));
  // Unchanged, and still good to commit where it was begun.
  EXPECT_EQ(pending.step, 200);
  EXPECT_TRUE(CommitCheckpoint(env_, pending, manifest).ok());
}

TEST_F(CheckpointWriterTest, PointerFailureDoesNotFailTheCommit) {
  PendingCheckpoint pending;
  const CheckpointManifest manifest = BeginWithShards(9, /*report=*/false, &pending);
  env_.FailOn(EnvOp::kNewWritableFile, "/checkpoint.tmp", absl::PermissionDeniedError("no"));
  ASSERT_TRUE(CommitCheckpoint(env_, pending, manifest).ok());
  EXPECT_EQ(ListCheckpoints(env_, model_dir_)->size(), 1u);
  EXPECT_TRUE(absl::IsNotFound(ReadCheckpointPointer(env_, model_dir_).status()));
}

TEST_F(CheckpointWriterTest, ManifestWriteFailurePublishesNothing) {
  PendingCheckpoint pending;
  const CheckpointManifest manifest = BeginWithShards(9, /*report=*/false, &pending);
  env_.FailOn(EnvOp::kSync, "/MANIFEST.tmp", absl::ResourceExhaustedError("disk full"));
  const absl::StatusOr<CheckpointManifest> committed = CommitCheckpoint(env_, pending, manifest);
  EXPECT_TRUE(absl::IsResourceExhausted(committed.status())) << committed.status();
  EXPECT_TRUE(ListCheckpoints(env_, model_dir_)->empty());
  EXPECT_FALSE(*PathExists(env_, pending.temporary_dir + "/MANIFEST"));
}

}  // namespace
}  // namespace pstrain
