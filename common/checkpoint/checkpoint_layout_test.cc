#include "common/checkpoint/checkpoint_layout.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(CheckpointLayoutTest, Names) {
  EXPECT_EQ(CheckpointDirName(1200), "ckpt-1200");
  EXPECT_EQ(CheckpointDir("/m", 0), "/m/ckpt-0");
  EXPECT_EQ(TemporaryCheckpointDir("/m/", 5), "/m/ckpt-5.tmp");
  EXPECT_EQ(DeletingCheckpointDir("m", 5), "m/ckpt-5.deleting");
  EXPECT_EQ(ShardFileName(1, 2), "shard-00001-of-00002");
  EXPECT_EQ(ShardFileName(3, 123456), "shard-00003-of-123456");
}

TEST(CheckpointLayoutTest, ParsesOnlyCanonicalCheckpointNames) {
  EXPECT_EQ(ParseCheckpointDirName("ckpt-0"), 0);
  EXPECT_EQ(ParseCheckpointDirName("ckpt-1200"), 1200);
  EXPECT_EQ(ParseCheckpointDirName("ckpt-9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(ParseCheckpointDirName("ckpt-9223372036854775808").has_value());
  EXPECT_FALSE(ParseCheckpointDirName("ckpt-").has_value());
  EXPECT_FALSE(ParseCheckpointDirName("ckpt-007").has_value());
  EXPECT_FALSE(ParseCheckpointDirName("ckpt--1").has_value());
  EXPECT_FALSE(ParseCheckpointDirName("ckpt-+1").has_value());
  EXPECT_FALSE(ParseCheckpointDirName("ckpt-1 ").has_value());
  EXPECT_FALSE(ParseCheckpointDirName("ckpt-5.tmp").has_value());
  EXPECT_FALSE(ParseCheckpointDirName("model-5").has_value());
}

TEST(CheckpointLayoutTest, ClassifiesModelDirEntries) {
  EXPECT_EQ(ClassifyModelDirEntry("ckpt-5").kind, CheckpointEntryKind::kCheckpoint);
  EXPECT_EQ(ClassifyModelDirEntry("ckpt-5").step, 5);
  EXPECT_EQ(ClassifyModelDirEntry("ckpt-5.tmp").kind, CheckpointEntryKind::kTemporary);
  EXPECT_EQ(ClassifyModelDirEntry("ckpt-7.deleting").kind, CheckpointEntryKind::kDeleting);
  EXPECT_EQ(ClassifyModelDirEntry("ckpt-7.deleting").step, 7);
  EXPECT_EQ(ClassifyModelDirEntry("checkpoint").kind, CheckpointEntryKind::kOther);
  EXPECT_EQ(ClassifyModelDirEntry("train").kind, CheckpointEntryKind::kOther);
  EXPECT_EQ(ClassifyModelDirEntry("ckpt-x.tmp").kind, CheckpointEntryKind::kOther);
  EXPECT_EQ(ClassifyModelDirEntry("ckpt-5.tmp.tmp").kind, CheckpointEntryKind::kOther);
}

}  // namespace
}  // namespace pstrain
