#ifndef PSTRAIN_COMMON_CHECKPOINT_TEST_CHECKPOINTS_H_
#define PSTRAIN_COMMON_CHECKPOINT_TEST_CHECKPOINTS_H_

// Checkpoints and damage for tests. Thread-compatible.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "protos/checkpoint.pb.h"

namespace pstrain {

// A fresh, empty folder under testing::TempDir() named after the running
// test, so tests of one binary do not see each other's files.
std::string NewTestDir(Env& env);

// The content a test shard file gets: deterministic in (step, shard_index),
// a few KiB long.
std::string TestShardContents(int64_t step, int shard_index);

// Begins a checkpoint of `step` in `model_dir`, writes `num_shards` shard
// files the way a parameter server would, and commits it with job id "job"
// and the given final flag. Returns the committed MANIFEST.
absl::StatusOr<CheckpointManifest> WriteTestCheckpoint(Env& env, const std::string& model_dir,
                                                       int64_t step, int num_shards,
                                                       bool final = false);

// Inverts bit `bit` (0-7) of the byte at `offset` of `path`.
absl::Status FlipBit(Env& env, const std::string& path, int64_t offset, int bit = 0);

// Writes `contents` to `path` (not atomically).
absl::Status WriteTestFile(Env& env, const std::string& path, const std::string& contents);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CHECKPOINT_TEST_CHECKPOINTS_H_
