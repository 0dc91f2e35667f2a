#include "common/piece/dense_piece.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/tensor/bfloat16.h"

namespace pstrain {
namespace {

constexpr int64_t kFloatBytes = 4;
constexpr int64_t kBfloat16Bytes = 2;

bool SameDims(const TensorShape& proto, absl::Span<const int64_t> dims) {
  return proto.dims_size() == static_cast<int>(dims.size()) &&
         std::equal(dims.begin(), dims.end(), proto.dims().begin());
}

int64_t NumElements(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

}  // namespace

int64_t DensePieceBytes(int64_t whole_bytes, int64_t element_bytes, int64_t chunk_bytes) {
  if (whole_bytes <= chunk_bytes) return whole_bytes;
  return std::max<int64_t>(element_bytes, chunk_bytes / element_bytes * element_bytes);
}

void SetDensePieceHeader(DataType dtype, absl::Span<const int64_t> dims, int64_t offset,
                         int64_t size, int64_t whole_bytes, DenseTensor* piece) {
  piece->set_dtype(dtype);
  piece->mutable_shape()->mutable_dims()->Assign(dims.begin(), dims.end());
  if (size < whole_bytes) {
    piece->mutable_chunk()->set_offset(offset);
    piece->mutable_chunk()->set_total_bytes(whole_bytes);
  } else {
    piece->clear_chunk();
  }
}

absl::StatusOr<DensePlacement> PlaceDensePiece(absl::string_view name, const DenseTensor& piece,
                                               int64_t wire_bytes, absl::Span<const int64_t> dims) {
  DensePlacement placement;
  placement.narrowed = piece.dtype() == DATA_TYPE_BFLOAT16;
  if (piece.dtype() != DATA_TYPE_FLOAT32 && !placement.narrowed) {
    return absl::InvalidArgumentError(
        absl::StrCat("the values of \"", name, "\" are ", DataType_Name(piece.dtype()),
                     "; dense values travel as DATA_TYPE_FLOAT32 or DATA_TYPE_BFLOAT16"));
  }
  if (!SameDims(piece.shape(), dims)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the values of \"", name, "\" have shape [", absl::StrJoin(piece.shape().dims(), ", "),
        "]; the variable has [", absl::StrJoin(dims, ", "), "]"));
  }
  const int64_t element_bytes = placement.narrowed ? kBfloat16Bytes : kFloatBytes;
  const int64_t wire_total = NumElements(dims) * element_bytes;
  int64_t wire_offset = 0;
  if (piece.has_chunk()) {
    wire_offset = piece.chunk().offset();
    if (piece.chunk().total_bytes() != wire_total || wire_offset < 0 ||
        wire_offset % element_bytes != 0 || wire_bytes % element_bytes != 0 || wire_bytes == 0 ||
        wire_offset > wire_total || wire_bytes > wire_total - wire_offset) {
      return absl::InvalidArgumentError(
          absl::StrCat("a chunk of \"", name, "\" at offset ", wire_offset, " with ", wire_bytes,
                       " bytes and total_bytes ", piece.chunk().total_bytes(),
                       " is not a whole-element piece of its ", wire_total, " bytes"));
    }
  } else if (wire_bytes != wire_total) {
    return absl::InvalidArgumentError(absl::StrCat("the values of \"", name, "\" have ", wire_bytes,
                                                   " bytes; they need ", wire_total));
  }
  // From here on in float32 bytes.
  const int64_t widen = kFloatBytes / element_bytes;
  placement.wire_bytes = wire_bytes;
  placement.elements = wire_bytes / element_bytes;
  placement.offset = wire_offset * widen;
  placement.size = wire_bytes * widen;
  return placement;
}

void WriteDensePiece(const DensePlacement& placement, const char* from, char* to) {
  if (placement.narrowed) {
    WidenBfloat16(from, placement.elements, reinterpret_cast<float*>(to));
  } else {
    std::memcpy(to, from, placement.size);
  }
}

}  // namespace pstrain
