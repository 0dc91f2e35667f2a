#ifndef PSTRAIN_COMMON_NET_WIRE_BYTES_H_
#define PSTRAIN_COMMON_NET_WIRE_BYTES_H_

// A protobuf message's wire form built from pieces, so that large bytes
// fields (tensor data) go to gRPC as slices of their own -- copied once
// from the caller's tensor or filled in place -- instead of being copied
// into a message and then again into gRPC's buffers.

#include <cstddef>
#include <string>
#include <vector>

#include "google/protobuf/message_lite.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "protos/tensor.pb.h"

namespace pstrain {

// Bytes in wire order: serialised messages and framing (copied, small) and
// slices (referenced). Appending fields in field-number order gives what
// SerializeAsString gives for the same message. Not thread-safe.
class WireBytes {
 public:
  // The fields of `message`, serialised.
  void AppendMessage(const google::protobuf::MessageLite& message);
  // Field `field` (type bytes) holding `bytes`; nothing when empty, as
  // proto3 leaves out an empty field.
  void AppendBytesField(int field, grpc::Slice bytes);
  // Field `field` (a message) holding `body`.
  void AppendMessageField(int field, WireBytes body);

  size_t size() const { return size_; }

  // The bytes as a buffer for a gRPC stream (the slices referenced).
  grpc::ByteBuffer ToByteBuffer() &&;

 private:
  void AppendOwned(const std::string& bytes);
  void AppendSlice(grpc::Slice slice);

  // Pieces in order; small owned bytes gather in pending_ until a slice
  // (or the end) comes.
  std::vector<grpc::Slice> slices_;
  std::string pending_;
  size_t size_ = 0;
};

// The wire form of `tensor` -- a NamedTensor holding a DenseTensor whose
// data is empty -- with `data` as that data: byte for byte what the
// NamedTensor with its data set would serialise to.
WireBytes DenseTensorBytes(const NamedTensor& tensor, grpc::Slice data);

// Every byte of `buffer`, its slices joined: what the peer reads. For tests
// and diagnostics (it copies everything).
std::string ByteBufferContents(const grpc::ByteBuffer& buffer);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_NET_WIRE_BYTES_H_
