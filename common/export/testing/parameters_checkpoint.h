#ifndef PSTRAIN_COMMON_EXPORT_TESTING_PARAMETERS_CHECKPOINT_H_
#define PSTRAIN_COMMON_EXPORT_TESTING_PARAMETERS_CHECKPOINT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/export/model_parameters.h"
#include "protos/checkpoint.pb.h"
#include "protos/job.pb.h"

namespace pstrain {

// Writes `parameters` as checkpoint ckpt-<step> of `model_dir` the way
// `num_shards` parameter servers would (common/checkpoint/shard_file.h):
// dense variable i in shard i % num_shards, embedding rows in the shard
// RowShard places them on, every value followed by `num_slots` optimizer
// slots filled with 0.5 (which a reader of values must leave out), then the
// MANIFEST, which carries `spec` as the coordinator's would. Returns the
// MANIFEST.
absl::StatusOr<CheckpointManifest> WriteParametersCheckpoint(
    Env& env, const std::string& model_dir, int64_t step, const ModelParameters& parameters,
    int num_shards, bool final = false, int num_slots = 1, const JobSpec& spec = JobSpec());

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_TESTING_PARAMETERS_CHECKPOINT_H_
