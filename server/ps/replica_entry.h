#ifndef PSTRAIN_SERVER_PS_REPLICA_ENTRY_H_
#define PSTRAIN_SERVER_PS_REPLICA_ENTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/gradient_ref.h"
#include "server/ps/push_dedup.h"
#include "server/ps/push_ledger.h"
#include "server/ps/shard_variable.h"

namespace pstrain {

// A push as a primary forwards it to its backup (ReplicaEntry.push): whole,
// float32, no chunks, parts or lane; its id, base version, examples and
// origin. `gradients` as the shard validated them (indices into
// `variables`). Copies every value: built before the shard's lock is taken.
PushRequest ForwardedPush(const std::vector<std::unique_ptr<ShardVariable>>& variables,
                          const PushKey& key, int64_t base_version,
                          absl::Span<const GradientRef> gradients, const PushSource& source);

// A forwarded push's gradients, borrowing `push`'s bytes (which must
// outlive them); `find` gives a variable's index by name.
// InvalidArgument: not a whole float32 push (a chunk, a lane's bytes,
// values not a whole number of floats). NotFound: an unknown variable.
absl::StatusOr<std::vector<GradientRef>> ForwardedGradients(
    const PushRequest& push, absl::FunctionRef<absl::StatusOr<int>(absl::string_view)> find);

// The push's key, as ForwardedPush wrote it; its source is
// PushSourceOf (push_ledger.h).
PushKey ForwardedKey(const PushRequest& push);

// An agreed round the primary committed (ReplicaEntry.commit).
ReplicaEntry CommitEntry(const std::string& job_id, int64_t round,
                         absl::Span<const PushKey> members);
// Leases the primary sealed (ReplicaEntry.seal).
ReplicaEntry SealEntry(const std::string& job_id, absl::Span<const int64_t> lease_ids);

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_REPLICA_ENTRY_H_
