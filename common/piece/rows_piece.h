#ifndef PSTRAIN_COMMON_PIECE_ROWS_PIECE_H_
#define PSTRAIN_COMMON_PIECE_ROWS_PIECE_H_

// Rows of a 2-D tensor (an embedding table, its gradient) as pieces on the
// PushPull wire (SparseRows in tensor.proto): ids and, for each, row_width
// float32 values. What a sender gathers into a piece and what a receiver
// checks and scatters back, for both directions (a worker's push, a
// shard's pull answer).

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "protos/tensor.pb.h"

namespace pstrain {

// Rows per piece of rows `row_width` floats wide for messages of at most
// `chunk_bytes`: at least one.
int64_t RowsPerPiece(int64_t row_width, int64_t chunk_bytes);

// Replaces *piece with the rows at `positions` of `ids` and `values`
// (ids.size() rows of `row_width` floats), in that order.
void GatherRowsPiece(absl::Span<const int64_t> ids, const float* values, int64_t row_width,
                     absl::Span<const int32_t> positions, SparseRows* piece);

// Checks the piece `piece` of `name`, whose values (wherever they lie) are
// `values_bytes` long, against rows of `row_width` floats.
// InvalidArgument, naming `name`: not float32, another row width, or not
// ids_size * row_width values.
absl::Status CheckRowsPiece(absl::string_view name, const SparseRows& piece, int64_t values_bytes,
                            int64_t row_width);

// Where a receiver's rows go: the ids asked for (`ids`), the tensor of
// their values (ids.size() rows of row_width floats), and the positions in
// `ids` that one sender answers, in the order it answers them.
struct RowsTarget {
  absl::Span<const int64_t> ids;
  float* values = nullptr;
  int64_t row_width = 0;
  absl::Span<const int32_t> positions;
};

// Copies a checked piece's rows (`values`, as CheckRowsPiece accepted) to
// the next positions of `target` from `*next` on, and advances *next.
// InvalidArgument, naming `name`: more rows than positions are left, or a
// row other than the one asked for at its position.
absl::Status ScatterRowsPiece(absl::string_view name, const SparseRows& piece,
                              absl::string_view values, const RowsTarget& target, size_t* next);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_PIECE_ROWS_PIECE_H_
