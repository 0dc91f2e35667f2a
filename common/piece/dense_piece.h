#ifndef PSTRAIN_COMMON_PIECE_DENSE_PIECE_H_
#define PSTRAIN_COMMON_PIECE_DENSE_PIECE_H_

// A dense variable's values or gradient as pieces on the PushPull wire
// (DenseTensor in tensor.proto): the whole tensor, or a chunk of whole
// elements of it; float32, or bfloat16 that the receiver widens into its
// float32 tensor. What a sender cuts and writes and what a receiver checks
// and where it puts the bytes, for both directions (a worker's push, a
// shard's pull answer). Only headers and arithmetic: the bytes are moved
// by the caller, wherever they lie (a message, gRPC's slices, a lane).

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "protos/tensor.pb.h"

namespace pstrain {

// ---------------------------------------------------------------- send --

// Bytes of each piece a dense tensor of `whole_bytes` (elements of
// `element_bytes`) is cut into for messages of at most `chunk_bytes`: the
// whole tensor when it fits, else as many whole elements as fit (at least
// one). The last piece holds what is left.
int64_t DensePieceBytes(int64_t whole_bytes, int64_t element_bytes, int64_t chunk_bytes);

// Replaces *piece's dtype, shape and chunk with those of bytes
// [offset, offset + size) of a tensor of `whole_bytes`: no chunk when the
// piece is the whole tensor. Leaves data and shared alone.
void SetDensePieceHeader(DataType dtype, absl::Span<const int64_t> dims, int64_t offset,
                         int64_t size, int64_t whole_bytes, DenseTensor* piece);

// ------------------------------------------------------------- receive --

// Where a received piece's values go in their float32 tensor.
struct DensePlacement {
  // The piece is bfloat16: its values must be widened, not copied.
  bool narrowed = false;
  // Bytes the piece carries (bfloat16 or float32).
  int64_t wire_bytes = 0;
  // Elements it carries.
  int64_t elements = 0;
  // Byte offset and size of its values in the float32 tensor.
  int64_t offset = 0;
  int64_t size = 0;
};

// Checks the piece `piece` of `name`, carrying `wire_bytes` of data
// wherever they lie, against its float32 tensor of shape `dims`, and says
// where its values go. InvalidArgument, naming `name`: a dtype other than
// float32 or bfloat16; another shape; a chunk that is not a non-empty run
// of whole elements inside the tensor or names another total size; an
// unchunked piece that is not the whole tensor.
absl::StatusOr<DensePlacement> PlaceDensePiece(absl::string_view name, const DenseTensor& piece,
                                               int64_t wire_bytes, absl::Span<const int64_t> dims);

// Writes a placed piece's values (its `wire_bytes` at `from`) to `to`,
// room for placement.size bytes (in the float32 tensor, at
// placement.offset): copied, or widened from bfloat16.
void WriteDensePiece(const DensePlacement& placement, const char* from, char* to);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_PIECE_DENSE_PIECE_H_
