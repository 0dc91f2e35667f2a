#ifndef PSTRAIN_WORKER_INTERNAL_OUTGOING_REQUEST_H_
#define PSTRAIN_WORKER_INTERNAL_OUTGOING_REQUEST_H_

// A PushPullRequest whose dense gradient bytes stay in the caller's tensors
// until it is serialised, and its serialisation into a grpc::ByteBuffer
// that copies each gradient once, straight from the tensor into a slice of
// its own (a protobuf message would take two copies: into the message, then
// into gRPC's buffer).
//
// The slices own their bytes rather than point at the tensors: gRPC may
// keep a slice after its call has finished (seen when a parameter server
// died mid-push: the connection's buffers outlived the call by more than
// the call deadline), and the worker overwrites its gradients every step.

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "grpcpp/support/byte_buffer.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace worker {
namespace internal {

// `message` as it would be sent, except that for every i where
// dense_data[i] is not empty, push().gradients(i).dense().data() is left
// empty and those bytes are read from dense_data[i] instead, which must
// stay valid until the request is serialised.
struct OutgoingRequest {
  PushPullRequest message;
  // Indexed like message.push().gradients(); may be shorter (the rest own
  // their bytes).
  std::vector<absl::Span<const char>> dense_data;
  // For a pull: bytes of values its answers will carry, for which a
  // shared-memory lane sets room aside. 0: none (the answers carry them).
  int64_t answer_bytes = 0;

  // The request with every borrowed byte copied in (for tests and for
  // messages that cannot be borrowed).
  PushPullRequest Materialize() const;
};

// The protobuf wire form of request.Materialize(), byte for byte what
// SerializeAsString would give, as slices: the framing and header fields,
// and each gradient's bytes copied once into a slice of its own. The
// caller may change its tensors as soon as this returns.
grpc::ByteBuffer SerializeRequest(const OutgoingRequest& request);

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_OUTGOING_REQUEST_H_
