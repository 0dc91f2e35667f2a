#ifndef PSTRAIN_COMMON_TENSOR_TENSOR_PROTO_H_
#define PSTRAIN_COMMON_TENSOR_TENSOR_PROTO_H_

// Conversion between Tensor and the wire message DenseTensor, whole or in
// pieces (TensorChunk) for tensors larger than one message should carry.
// This is the parameter server's hot path: bytes are copied once, from the
// tensor into the message or from the message into the tensor, and never
// through an intermediate buffer.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/tensor/tensor.h"
#include "protos/tensor.pb.h"

namespace pstrain {

// Decodes an unchunked DenseTensor (one that has no `chunk`).
// InvalidArgument, with a message that names the values: unspecified or
// unknown dtype, an invalid shape, a data size other than
// num_elements * element size, or a piece of a chunked tensor (use
// TensorAssembler).
// ResourceExhausted: the tensor's size exceeds Tensor::kMaxBytes.
absl::StatusOr<Tensor> TensorFromProto(const DenseTensor& proto);

// Replaces the contents of *proto with the whole of `tensor` (no chunk).
// Reusing one *proto keeps its data capacity across calls.
void TensorToProto(const Tensor& tensor, DenseTensor* proto);

// Splitting a tensor into pieces of at most max_chunk_bytes of data each.
// A tensor of at most max_chunk_bytes (including one of no elements) is one
// piece without a chunk, identical to TensorToProto's. A larger one is
// pieces in order, each with dtype, shape and chunk {offset, total_bytes};
// every piece but the last holds the same number of bytes, a whole number of
// elements when max_chunk_bytes is at least one element, so a receiver may
// also use each piece on its own. max_chunk_bytes must be > 0 (CHECK).

// The number of pieces TensorChunkToProto makes for `tensor`.
size_t TensorChunkCount(const Tensor& tensor, size_t max_chunk_bytes);

// Replaces the contents of *piece with piece number `index` (0-based,
// < TensorChunkCount). Lets a streaming sender fill each outgoing message in
// place rather than hold every piece at once.
void TensorChunkToProto(const Tensor& tensor, size_t max_chunk_bytes, size_t index,
                        DenseTensor* piece);

// All pieces at once.
std::vector<DenseTensor> TensorToChunks(const Tensor& tensor, size_t max_chunk_bytes);

// Rebuilds a tensor from the pieces TensorToChunks made, given in order,
// writing each piece's bytes straight into the tensor's buffer. Also takes a
// single unchunked DenseTensor. After Finish() it is empty again and takes
// the next tensor. Not thread-safe.
//
//   TensorAssembler assembler(max_request_bytes);
//   while (stream->Read(&piece)) RETURN_IF_ERROR(assembler.Add(piece));
//   ASSIGN_OR_RETURN(Tensor tensor, assembler.Finish());
class TensorAssembler {
 public:
  // Accepts tensors of up to Tensor::kMaxBytes.
  TensorAssembler() : TensorAssembler(Tensor::kMaxBytes) {}
  // Accepts tensors of up to max_total_bytes. A server should pass its own
  // limit: the first piece names the total size, and the buffer for all of
  // it is allocated when that piece arrives.
  explicit TensorAssembler(int64_t max_total_bytes);

  TensorAssembler(const TensorAssembler&) = delete;
  TensorAssembler& operator=(const TensorAssembler&) = delete;

  // Adds the next piece. A refused piece changes nothing, so the caller can
  // report it and drop the stream.
  // InvalidArgument, naming the piece number and the values:
  //   - the first piece has an invalid dtype or shape, or its data or
  //     chunk.total_bytes does not match dtype and shape;
  //   - a later piece has a different dtype, shape or total_bytes, or no
  //     chunk;
  //   - a gap (offset beyond the bytes received so far) or an overlap
  //     (offset before them);
  //   - offset + data size beyond total_bytes, a negative offset, or an
  //     empty piece of a non-empty tensor;
  //   - any piece after the tensor is complete.
  // ResourceExhausted: total_bytes exceeds max_total_bytes, or the buffer
  //   cannot be allocated.
  absl::Status Add(const DenseTensor& piece);

  // True once every byte of the tensor has arrived.
  bool complete() const;

  // Bytes of tensor data received so far.
  int64_t bytes_received() const { return bytes_received_; }

  // Returns the tensor and empties the assembler.
  // InvalidArgument: no piece was added, or the tensor is incomplete (the
  // message says how many bytes arrived of how many); the pieces received so
  // far are kept.
  absl::StatusOr<Tensor> Finish();

 private:
  absl::Status AddFirst(const DenseTensor& piece);
  absl::Status AddNext(const DenseTensor& piece);

  // Constant after construction.
  const int64_t max_total_bytes_;

  // The tensor being filled, from the first piece until Finish().
  std::optional<Tensor> tensor_;
  int64_t bytes_received_ = 0;
  // Pieces accepted so far, for messages.
  int pieces_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TENSOR_TENSOR_PROTO_H_
