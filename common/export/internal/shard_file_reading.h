#ifndef PSTRAIN_COMMON_EXPORT_INTERNAL_SHARD_FILE_READING_H_
#define PSTRAIN_COMMON_EXPORT_INTERNAL_SHARD_FILE_READING_H_

// The one place outside the parameter server where a shard file of a
// checkpoint is read. The format belongs to common/checkpoint/shard_file.h;
// this adapts its reader to what the checkpoint loader needs: each
// variable's values without optimizer slots.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/checkpoint/env.h"
#include "protos/checkpoint.pb.h"

namespace pstrain {
namespace export_internal {

// One variable as one shard file holds it, optimizer slots dropped.
struct ShardVariableValues {
  std::string name;
  bool embedding = false;
  std::vector<int64_t> dims;  // the variable's shape ([rows, dim] for a table)
  // Dense: every element, row-major. Embedding: ids.size() rows of dims[1].
  std::vector<float> values;
  std::vector<int64_t> ids;  // embedding: the rows this shard holds
};

// Reads the shard file `entry` of `checkpoint_dir` (checked against the
// size and CRC32C the MANIFEST gives, then record by record) and calls
// `visit` once per variable, stopping at the first error `visit` returns.
// NotFound: no such file. DataLoss: the file is truncated or damaged (the
// message names it). FailedPrecondition: a shard file format this build
// does not read.
absl::Status ReadShardFileVariables(Env& env, const std::string& checkpoint_dir,
                                    const CheckpointShardFile& entry,
                                    const std::function<absl::Status(ShardVariableValues&)>& visit);

}  // namespace export_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_INTERNAL_SHARD_FILE_READING_H_
