#include "common/piece/rows_piece.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

constexpr int64_t kFloatBytes = 4;

}  // namespace

int64_t RowsPerPiece(int64_t row_width, int64_t chunk_bytes) {
  return std::max<int64_t>(1, chunk_bytes / (row_width * kFloatBytes));
}

void GatherRowsPiece(absl::Span<const int64_t> ids, const float* values, int64_t row_width,
                     absl::Span<const int32_t> positions, SparseRows* piece) {
  piece->set_dtype(DATA_TYPE_FLOAT32);
  piece->set_row_width(row_width);
  piece->mutable_ids()->Clear();
  piece->mutable_ids()->Reserve(static_cast<int>(positions.size()));
  const int64_t row_bytes = row_width * kFloatBytes;
  std::string* data = piece->mutable_values();
  data->resize(positions.size() * row_bytes);
  char* out = data->data();
  for (const int32_t p : positions) {
    piece->add_ids(ids[p]);
    std::memcpy(out, values + static_cast<int64_t>(p) * row_width, row_bytes);
    out += row_bytes;
  }
}

absl::Status CheckRowsPiece(absl::string_view name, const SparseRows& piece, int64_t values_bytes,
                            int64_t row_width) {
  if (piece.dtype() != DATA_TYPE_FLOAT32 || piece.row_width() != row_width ||
      values_bytes != static_cast<int64_t>(piece.ids_size()) * row_width * kFloatBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the rows of \"", name, "\" must be DATA_TYPE_FLOAT32 of row_width ", row_width,
        " with ids_size * row_width values; got ", DataType_Name(piece.dtype()), ", width ",
        piece.row_width(), ", ", piece.ids_size(), " ids, ", values_bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status ScatterRowsPiece(absl::string_view name, const SparseRows& piece,
                              absl::string_view values, const RowsTarget& target, size_t* next) {
  if (*next + piece.ids_size() > target.positions.size()) {
    return absl::InvalidArgumentError(absl::StrCat(piece.ids_size(), " more rows of \"", name,
                                                   "\" where ", target.positions.size() - *next,
                                                   " were left to answer"));
  }
  const int64_t row_bytes = target.row_width * kFloatBytes;
  const char* from = values.data();
  for (int k = 0; k < piece.ids_size(); ++k, ++*next) {
    const int32_t p = target.positions[*next];
    if (target.ids[p] != piece.ids(k)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "row ", piece.ids(k), " of \"", name, "\" where row ", target.ids[p], " was asked for"));
    }
    std::memcpy(target.values + static_cast<int64_t>(p) * target.row_width, from, row_bytes);
    from += row_bytes;
  }
  return absl::OkStatus();
}

}  // namespace pstrain
