#include "common/checkpoint/manifest.h"

#include <cstdint>
#include <limits>
#include <string>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/whole_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

CheckpointManifest SampleManifest() {
  CheckpointManifest manifest;
  manifest.set_format_version(kManifestFormatVersion);
  manifest.set_global_step(1200);
  manifest.set_job_id("job-7");
  manifest.set_created_unix_ms(1700000000123);
  for (int i = 0; i < 2; ++i) {
    CheckpointShardFile* shard = manifest.add_shards();
    shard->set_name(i == 0 ? "shard-00000-of-00002" : "shard-00001-of-00002");
    shard->set_shard_index(i);
    shard->set_bytes(1000 + i);
    shard->set_crc32c(0xdeadbeef + i);
  }
  DataPosition* position = manifest.mutable_data_position();
  position->set_epoch(3);
  position->set_num_records(60000);
  RecordRange* range = position->add_finished();
  range->set_begin(0);
  range->set_end(512);
  manifest.mutable_spec()->set_name("mlp");
  manifest.mutable_spec()->mutable_checkpoint()->set_model_dir("/models/mlp");
  manifest.set_final(true);
  return manifest;
}

TEST(ManifestTest, RoundTrip) {
  const CheckpointManifest manifest = SampleManifest();
  const std::string bytes = SerializeManifest(manifest);
  const absl::StatusOr<CheckpointManifest> parsed = ParseManifest(bytes, "MANIFEST");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  CheckpointManifest expected = manifest;
  expected.set_manifest_crc32c(parsed->manifest_crc32c());
  EXPECT_EQ(parsed->SerializeAsString(), expected.SerializeAsString());
  EXPECT_NE(parsed->manifest_crc32c(), 0u);
}

TEST(ManifestTest, FileIsAPlainCheckpointManifestEndingInItsChecksum) {
  const std::string bytes = SerializeManifest(SampleManifest());
  CheckpointManifest plain;
  ASSERT_TRUE(plain.ParseFromString(bytes));
  EXPECT_EQ(plain.global_step(), 1200);
  ASSERT_GE(bytes.size(), 5u);
  EXPECT_EQ(bytes[bytes.size() - 5], 0x4d);
}

TEST(ManifestTest, EveryFlippedBitIsDetected) {
  const std::string bytes = SerializeManifest(SampleManifest());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ (1 << bit));
      const absl::StatusOr<CheckpointManifest> parsed = ParseManifest(damaged, "ckpt-1/MANIFEST");
      ASSERT_TRUE(absl::IsDataLoss(parsed.status()))
          << "byte " << i << " bit " << bit << ": " << parsed.status();
      EXPECT_THAT(parsed.status().message(), HasSubstr("ckpt-1/MANIFEST"));
    }
  }
}

TEST(ManifestTest, TruncatedManifestIsDataLoss) {
  const std::string bytes = SerializeManifest(SampleManifest());
  for (size_t n : {size_t{0}, size_t{4}, bytes.size() / 2, bytes.size() - 1}) {
    const absl::StatusOr<CheckpointManifest> parsed = ParseManifest(bytes.substr(0, n), "M");
    EXPECT_TRUE(absl::IsDataLoss(parsed.status())) << n << ": " << parsed.status();
  }
}

TEST(ManifestTest, NewerFormatIsFailedPrecondition) {
  CheckpointManifest manifest = SampleManifest();
  manifest.set_format_version(kManifestFormatVersion + 1);
  const absl::StatusOr<CheckpointManifest> parsed = ParseManifest(SerializeManifest(manifest), "M");
  EXPECT_TRUE(absl::IsFailedPrecondition(parsed.status())) << parsed.status();
}

TEST(ManifestTest, ImpossibleContentIsDataLoss) {
  CheckpointManifest escaping = SampleManifest();
  escaping.mutable_shards(0)->set_name("../../etc/passwd");
  CheckpointManifest twice = SampleManifest();
  twice.mutable_shards(1)->set_name(twice.shards(0).name());
  CheckpointManifest negative = SampleManifest();
  negative.mutable_shards(1)->set_bytes(-1);
  CheckpointManifest no_version = SampleManifest();
  no_version.clear_format_version();
  // The checkpoint-reader fuzz target's input
  // tests/fuzz/corpus/checkpoint_reader/shard_bytes_overflow: summing these
  // in CheckpointInfoFromManifest overflowed int64 (UBSan).
  CheckpointManifest overflowing = SampleManifest();
  overflowing.mutable_shards(0)->set_bytes(std::numeric_limits<int64_t>::max() - 1000);
  for (const CheckpointManifest& manifest : {escaping, twice, negative, no_version, overflowing}) {
    const absl::StatusOr<CheckpointManifest> parsed =
        ParseManifest(SerializeManifest(manifest), "M");
    EXPECT_TRUE(absl::IsDataLoss(parsed.status())) << parsed.status();
  }
}

TEST(ManifestTest, ReadManifestChecksTheFolderStep) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  const std::string dir = model_dir + "/ckpt-1200";
  ASSERT_TRUE(CreateDirs(env, dir).ok());
  EXPECT_TRUE(absl::IsNotFound(ReadManifest(env, dir).status()));

  ASSERT_TRUE(WriteManifest(env, dir, SampleManifest()).ok());
  const absl::StatusOr<CheckpointManifest> read = ReadManifest(env, dir);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->job_id(), "job-7");

  const std::string other = model_dir + "/ckpt-1300";
  ASSERT_TRUE(CreateDirs(env, other).ok());
  ASSERT_TRUE(WriteManifest(env, other, SampleManifest()).ok());
  const absl::StatusOr<CheckpointManifest> moved = ReadManifest(env, other);
  ASSERT_TRUE(absl::IsDataLoss(moved.status())) << moved.status();
  EXPECT_THAT(moved.status().message(), HasSubstr("1300"));
}

TEST(ManifestTest, OversizedManifestIsDataLoss) {
  PosixEnv env;
  const std::string dir = NewTestDir(env) + "/ckpt-1";
  ASSERT_TRUE(CreateDirs(env, dir).ok());
  ASSERT_TRUE(WriteTestFile(env, dir + "/MANIFEST", std::string(kMaxManifestBytes + 1, 0)).ok());
  EXPECT_TRUE(absl::IsDataLoss(ReadManifest(env, dir).status()));
}

TEST(ManifestTest, CheckpointInfoSumsShardBytes) {
  const CheckpointInfo info = CheckpointInfoFromManifest("/m/ckpt-1200", SampleManifest());
  EXPECT_EQ(info.step(), 1200);
  EXPECT_EQ(info.path(), "/m/ckpt-1200");
  EXPECT_EQ(info.created_unix_ms(), 1700000000123);
  EXPECT_EQ(info.bytes(), 2001);
  EXPECT_TRUE(info.final());
}

}  // namespace
}  // namespace pstrain
