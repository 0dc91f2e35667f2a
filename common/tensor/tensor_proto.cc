#include "common/tensor/tensor_proto.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

// What a DenseTensor says about the whole tensor, checked.
struct Header {
  DataType dtype;
  Shape shape;
  int64_t num_bytes;

  // "shape [2, 2] float32", for messages.
  std::string Describe() const {
    return absl::StrCat("shape ", shape.DebugString(), " ", DataTypeName(dtype));
  }
};

// InvalidArgument for an unusable dtype or shape; the messages start with
// "tensor" and are meant to be prefixed by the caller where it helps.
absl::StatusOr<Header> ParseHeader(const DenseTensor& proto) {
  const DataType dtype = proto.dtype();
  absl::StatusOr<size_t> element_size = DataTypeSize(dtype);
  if (!element_size.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", element_size.status().message()));
  }
  absl::StatusOr<Shape> shape = Shape::FromProto(proto.shape());
  if (!shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", shape.status().message()));
  }
  const int64_t n = shape->num_elements();
  const auto size = static_cast<int64_t>(*element_size);
  if (n > std::numeric_limits<int64_t>::max() / size) {
    return absl::InvalidArgumentError(absl::StrCat("tensor shape ", shape->DebugString(), " ",
                                                   DataTypeName(dtype),
                                                   " needs more than 2^63-1 bytes"));
  }
  return Header{dtype, *std::move(shape), n * size};
}

absl::Status CheckWholeDataSize(const DenseTensor& proto, const Header& header) {
  if (static_cast<int64_t>(proto.data().size()) != header.num_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("tensor data has ", proto.data().size(),
                                                   " bytes, ", header.Describe(), " needs ",
                                                   header.num_bytes));
  }
  return absl::OkStatus();
}

std::string ProtoShapeString(const TensorShape& proto) {
  return absl::StrCat("[", absl::StrJoin(proto.dims(), ", "), "]");
}

// Bytes per piece: the largest whole number of elements that fits, or
// max_chunk_bytes itself when not even one element does.
size_t PieceBytes(const Tensor& tensor, size_t max_chunk_bytes) {
  CHECK_GT(max_chunk_bytes, 0u) << "max_chunk_bytes must be positive";
  const size_t element_size = tensor.num_elements() > 0
                                  ? tensor.num_bytes() / static_cast<size_t>(tensor.num_elements())
                                  : 1;
  if (max_chunk_bytes < element_size) return max_chunk_bytes;
  return max_chunk_bytes / element_size * element_size;
}

void FillPiece(const Tensor& tensor, size_t offset, size_t size, DenseTensor* piece) {
  piece->Clear();  // Keeps the capacity of data for the next assign.
  piece->set_dtype(tensor.dtype());
  tensor.shape().ToProto(piece->mutable_shape());
  if (size > 0) {
    piece->mutable_data()->assign(static_cast<const char*>(tensor.raw_data()) + offset, size);
  }
}

}  // namespace

absl::StatusOr<Tensor> TensorFromProto(const DenseTensor& proto) {
  if (proto.has_chunk()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor is one piece of a chunked tensor (offset ", proto.chunk().offset(),
                     ", total_bytes ", proto.chunk().total_bytes(),
                     "); pieces must go through TensorAssembler"));
  }
  ASSIGN_OR_RETURN(Header header, ParseHeader(proto));
  RETURN_IF_ERROR(CheckWholeDataSize(proto, header));
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::CreateUninitialized(header.dtype, header.shape));
  if (header.num_bytes > 0) {
    std::memcpy(tensor.raw_data(), proto.data().data(), proto.data().size());
  }
  return tensor;
}

void TensorToProto(const Tensor& tensor, DenseTensor* proto) {
  FillPiece(tensor, 0, tensor.num_bytes(), proto);
}

size_t TensorChunkCount(const Tensor& tensor, size_t max_chunk_bytes) {
  const size_t piece_bytes = PieceBytes(tensor, max_chunk_bytes);
  if (tensor.num_bytes() <= max_chunk_bytes) return 1;
  return (tensor.num_bytes() + piece_bytes - 1) / piece_bytes;
}

void TensorChunkToProto(const Tensor& tensor, size_t max_chunk_bytes, size_t index,
                        DenseTensor* piece) {
  const size_t count = TensorChunkCount(tensor, max_chunk_bytes);
  CHECK_LT(index, count) << "piece index out of range for tensor " << tensor.DebugString();
  if (count == 1) {
    TensorToProto(tensor, piece);
    return;
  }
  const size_t piece_bytes = PieceBytes(tensor, max_chunk_bytes);
  const size_t offset = index * piece_bytes;
  FillPiece(tensor, offset, std::min(piece_bytes, tensor.num_bytes() - offset), piece);
  TensorChunk* chunk = piece->mutable_chunk();
  chunk->set_offset(static_cast<int64_t>(offset));
  chunk->set_total_bytes(static_cast<int64_t>(tensor.num_bytes()));
}

std::vector<DenseTensor> TensorToChunks(const Tensor& tensor, size_t max_chunk_bytes) {
  const size_t count = TensorChunkCount(tensor, max_chunk_bytes);
  std::vector<DenseTensor> pieces(count);
  for (size_t i = 0; i < count; ++i) {
    TensorChunkToProto(tensor, max_chunk_bytes, i, &pieces[i]);
  }
  return pieces;
}

TensorAssembler::TensorAssembler(int64_t max_total_bytes) : max_total_bytes_(max_total_bytes) {}

bool TensorAssembler::complete() const {
  return tensor_.has_value() && bytes_received_ == static_cast<int64_t>(tensor_->num_bytes());
}

absl::Status TensorAssembler::Add(const DenseTensor& piece) {
  return tensor_.has_value() ? AddNext(piece) : AddFirst(piece);
}

namespace {

// Checks where a chunked piece goes, given `received` bytes of `total`.
absl::Status CheckPlacement(const DenseTensor& piece, int number, int64_t received, int64_t total) {
  const int64_t offset = piece.chunk().offset();
  const auto size = static_cast<int64_t>(piece.data().size());
  if (offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor piece ", number, " has negative offset ", offset));
  }
  if (offset > received) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor piece ", number, " starts at offset ", offset, " but ", received,
                     " bytes have arrived: bytes [", received, ", ", offset, ") are missing"));
  }
  if (offset < received) {
    return absl::InvalidArgumentError(absl::StrCat("tensor piece ", number, " starts at offset ",
                                                   offset, ", overlapping bytes [", offset, ", ",
                                                   received, ") already received"));
  }
  if (size > total - offset) {
    return absl::InvalidArgumentError(absl::StrCat("tensor piece ", number, " covers bytes [",
                                                   offset, ", ", offset + size,
                                                   "), beyond total_bytes ", total));
  }
  if (size == 0 && total > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor piece ", number, " at offset ", offset, " is empty"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status TensorAssembler::AddFirst(const DenseTensor& piece) {
  absl::StatusOr<Header> header = ParseHeader(piece);
  if (!header.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("piece 1: ", header.status().message()));
  }
  if (!piece.has_chunk()) {
    RETURN_IF_ERROR(CheckWholeDataSize(piece, *header));
  } else if (piece.chunk().total_bytes() != header->num_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor piece 1 says total_bytes ", piece.chunk().total_bytes(), ", ",
                     header->Describe(), " needs ", header->num_bytes));
  } else {
    RETURN_IF_ERROR(CheckPlacement(piece, 1, 0, header->num_bytes));
  }
  if (header->num_bytes > max_total_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("tensor ", header->Describe(), " has ", header->num_bytes,
                     " bytes, more than the limit of ", max_total_bytes_));
  }
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::CreateUninitialized(header->dtype, header->shape));
  if (!piece.data().empty()) {
    std::memcpy(tensor.raw_data(), piece.data().data(), piece.data().size());
  }
  tensor_ = std::move(tensor);
  bytes_received_ = static_cast<int64_t>(piece.data().size());
  pieces_ = 1;
  return absl::OkStatus();
}

absl::Status TensorAssembler::AddNext(const DenseTensor& piece) {
  const int number = pieces_ + 1;
  const auto total = static_cast<int64_t>(tensor_->num_bytes());
  if (complete()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor piece ", number, " arrives after all ",
                                                   total, " bytes of the tensor were received"));
  }
  // The tensor is incomplete, so piece 1 had a chunk: an unchunked first
  // piece holds the whole tensor.
  if (!piece.has_chunk()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor piece ", number, " has no chunk, but piece 1 did"));
  }
  if (piece.dtype() != tensor_->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor piece ", number, " has dtype ", DataTypeName(piece.dtype()), " (",
        static_cast<int>(piece.dtype()), "), piece 1 had ", DataTypeName(tensor_->dtype())));
  }
  if (!ShapeEqualsProto(tensor_->shape(), piece.shape())) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor piece ", number, " has shape ", ProtoShapeString(piece.shape()),
                     ", piece 1 had ", tensor_->shape().DebugString()));
  }
  if (piece.chunk().total_bytes() != total) {
    return absl::InvalidArgumentError(absl::StrCat("tensor piece ", number, " says total_bytes ",
                                                   piece.chunk().total_bytes(), ", piece 1 said ",
                                                   total));
  }
  RETURN_IF_ERROR(CheckPlacement(piece, number, bytes_received_, total));
  std::memcpy(static_cast<char*>(tensor_->raw_data()) + bytes_received_, piece.data().data(),
              piece.data().size());
  bytes_received_ += static_cast<int64_t>(piece.data().size());
  pieces_ = number;
  return absl::OkStatus();
}

absl::StatusOr<Tensor> TensorAssembler::Finish() {
  if (!tensor_.has_value()) {
    return absl::InvalidArgumentError("no tensor pieces were received");
  }
  if (!complete()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor ", tensor_->DebugString(), " is incomplete: received ", bytes_received_, " of ",
        tensor_->num_bytes(), " bytes in ", pieces_, pieces_ == 1 ? " piece" : " pieces"));
  }
  Tensor tensor = *std::move(tensor_);
  tensor_.reset();
  bytes_received_ = 0;
  pieces_ = 0;
  return tensor;
}

}  // namespace pstrain
