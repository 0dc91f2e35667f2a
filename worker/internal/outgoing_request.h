#ifndef PSTRAIN_WORKER_INTERNAL_OUTGOING_REQUEST_H_
#define PSTRAIN_WORKER_INTERNAL_OUTGOING_REQUEST_H_

// A PushPullRequest whose dense gradient bytes stay in the caller's tensors
// until gRPC writes them to the socket, and its serialisation into a
// grpc::ByteBuffer whose slices point at those tensors: the worker's push
// makes no copy of its gradients in user space.

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "grpcpp/support/byte_buffer.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace worker {
namespace internal {

// `message` as it would be sent, except that for every i where
// dense_data[i] is not empty, push().gradients(i).dense().data() is left
// empty and those bytes are read from dense_data[i] instead, which must
// stay valid and unchanged until the ByteBuffer made from this request and
// every copy gRPC keeps of it are gone (BorrowedSlices says when).
struct OutgoingRequest {
  PushPullRequest message;
  // Indexed like message.push().gradients(); may be shorter (the rest own
  // their bytes).
  std::vector<absl::Span<const char>> dense_data;

  // The request with every borrowed byte copied in (for tests and for
  // messages that cannot be borrowed).
  PushPullRequest Materialize() const;
};

// Counts slices that point at borrowed memory and are still alive. A
// sender makes its buffers with one of these and waits, before the
// borrowed memory may change, until gRPC has dropped them all. Thread-safe.
class BorrowedSlices {
 public:
  BorrowedSlices() = default;
  BorrowedSlices(const BorrowedSlices&) = delete;
  BorrowedSlices& operator=(const BorrowedSlices&) = delete;
  // Waits for the slices; they must not outlive this object.
  ~BorrowedSlices();

  // Slices made through this object and not yet released.
  int64_t live() const;

  // Waits until live() is 0. DeadlineExceeded if it is not by `deadline`
  // (the borrowed memory is then still in use).
  absl::Status WaitUntilReleased(absl::Time deadline) const;

 private:
  friend grpc::ByteBuffer SerializeRequest(const OutgoingRequest& request,
                                           BorrowedSlices* borrowed);
  static void Release(void* self);

  mutable absl::Mutex mu_;
  int64_t live_ ABSL_GUARDED_BY(mu_) = 0;
};

// The protobuf wire form of request.Materialize(), byte for byte what
// SerializeAsString would give, as slices: the small framing and header
// fields copied, each borrowed span referenced where it lies. `borrowed`
// counts the referencing slices; it may be null only when nothing is
// borrowed.
grpc::ByteBuffer SerializeRequest(const OutgoingRequest& request, BorrowedSlices* borrowed);

}  // namespace internal
}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_INTERNAL_OUTGOING_REQUEST_H_
