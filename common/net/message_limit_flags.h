#ifndef PSTRAIN_COMMON_NET_MESSAGE_LIMIT_FLAGS_H_
#define PSTRAIN_COMMON_NET_MESSAGE_LIMIT_FLAGS_H_

// --max_message_mb: the largest gRPC message a pstrain process sends or
// receives, defined once for every daemon (its server and every channel it
// opens) and the `pstrain` client. A larger message is refused with
// RESOURCE_EXHAUSTED, and the refusal names this flag (grpc_status.h).

#include "absl/status/statusor.h"

namespace pstrain {

// --max_message_mb in bytes. InvalidArgument, naming the flag, when it is
// outside [1, 1024].
absl::StatusOr<int> MaxMessageBytesFromFlags();

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_MESSAGE_LIMIT_FLAGS_H_
