#ifndef PSTRAIN_SERVER_PS_PULL_READER_H_
#define PSTRAIN_SERVER_PS_PULL_READER_H_

// Answers a PullRequest from a ParameterShard: validation, and the values
// packed into messages of bounded size.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/parameter_shard.h"

namespace pstrain {

// Checks every name, range and row selection of `request` against the
// shard, and returns the bytes of values the answer will carry.
// NotFound: a variable the shard does not hold.
// InvalidArgument: a table named in `names` or `ranges`, a range outside
//   its variable, a row id out of range or on another shard, a scalar read
//   by rows, a negative min_version or wait_ms, nothing to read.
absl::StatusOr<int64_t> ValidatePull(const ParameterShard& shard, const PullRequest& request);

// Reads the values of a validated request into messages holding at most
// max_chunk_bytes of values each (at least one element or row each), all
// with `version`; the last has end_of_pull. A dense variable that does not
// fit the current message is split into TensorChunks. InvalidArgument: a
// row id held by another shard.
absl::StatusOr<std::vector<PullResponse>> ReadPull(const ParameterShard& shard,
                                                   const PullRequest& request, int64_t version,
                                                   int64_t max_chunk_bytes);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PULL_READER_H_
