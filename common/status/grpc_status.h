#ifndef PSTRAIN_COMMON_STATUS_GRPC_STATUS_H_
#define PSTRAIN_COMMON_STATUS_GRPC_STATUS_H_

// The one place where gRPC and Abseil statuses meet. Service adapters return
// ToGrpcStatus(core_result); clients turn call results back with
// FromGrpcStatus. The codes agree numerically; the mapping is still spelled
// out so that a code added on either side is noticed here. A status's
// ErrorReason (error_reason.h) crosses with it: in gRPC's status details,
// and in StatusProto.

#include "absl/status/status.h"
#include "grpcpp/support/status.h"
#include "protos/status.pb.h"

namespace pstrain {

grpc::Status ToGrpcStatus(const absl::Status& status);
// gRPC's refusal of a message over the size limit comes back naming the
// flag that sets it (--max_message_mb), so the person reading it knows what
// to change.
absl::Status FromGrpcStatus(const grpc::Status& status);

// For per-item outcomes inside streams.
StatusProto ToStatusProto(const absl::Status& status);
// An unknown code in the proto becomes kUnknown, keeping the message.
absl::Status FromStatusProto(const StatusProto& proto);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_STATUS_GRPC_STATUS_H_
