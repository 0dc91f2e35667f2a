#ifndef PSTRAIN_COMMON_EXPORT_CHECKPOINT_LOADER_H_
#define PSTRAIN_COMMON_EXPORT_CHECKPOINT_LOADER_H_

// Putting a checkpoint's shards back together: every parameter-server shard
// file of ckpt-<step>/ read into one model's full parameters (dense
// variables from the shard that holds each, embedding rows from all
// shards), optimizer slots left out.

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "common/checkpoint/env.h"
#include "common/export/internal/shard_file_reading.h"
#include "common/export/model_parameters.h"
#include "protos/checkpoint.pb.h"

namespace pstrain {

// Reads the shard files `manifest` lists (as VerifyCheckpoint returned it
// for `checkpoint_dir`) into *parameters, which must be fresh (every dense
// variable unset, every table empty).
// NotFound: a shard file is missing. DataLoss: a shard file is damaged, or
//   the shards disagree (a dense variable in two shards, a row twice).
// FailedPrecondition: the checkpoint does not fit the model: a variable the
//   model lacks, one of another kind or shape, a dense variable no shard
//   holds (the message names it).
//   Also: a shard file format this build does not read.
absl::Status LoadCheckpointParameters(Env& env, const std::string& checkpoint_dir,
                                      const CheckpointManifest& manifest,
                                      ModelParameters* parameters);

// Gathers variables shard by shard into a ModelParameters and checks that
// they fit the model and each other. Not thread-safe.
class CheckpointAssembler {
 public:
  // `parameters` is borrowed; `checkpoint` names the checkpoint in messages.
  CheckpointAssembler(ModelParameters* parameters, std::string checkpoint);

  // Adds what shard file `file` holds of one variable. Errors as
  // LoadCheckpointParameters.
  absl::Status Add(const std::string& file, export_internal::ShardVariableValues& variable);

  // FailedPrecondition: a dense variable no shard held.
  absl::Status Finish() const;

 private:
  ModelParameters* const parameters_;
  const std::string checkpoint_;
  absl::flat_hash_set<std::string> dense_seen_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_CHECKPOINT_LOADER_H_
