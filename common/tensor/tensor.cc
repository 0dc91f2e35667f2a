#include "common/tensor/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace pstrain {

void Tensor::AlignedFree::operator()(void* p) const {
  ::operator delete (p, std::align_val_t{kAlignment});
}

Tensor::Tensor() : Tensor(DATA_TYPE_UNSPECIFIED, Shape({0}), 0, nullptr) {}

Tensor::Tensor(DataType dtype, Shape shape, size_t num_bytes,
               std::unique_ptr<void, AlignedFree> buffer)
    : dtype_(dtype), shape_(std::move(shape)), num_bytes_(num_bytes), buffer_(std::move(buffer)) {}

Tensor::Tensor(Tensor&& other) noexcept
    : dtype_(other.dtype_),
      shape_(std::move(other.shape_)),
      num_bytes_(other.num_bytes_),
      buffer_(std::move(other.buffer_)) {
  other.ResetToPlaceholder();
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    num_bytes_ = other.num_bytes_;
    buffer_ = std::move(other.buffer_);
    other.ResetToPlaceholder();
  }
  return *this;
}

void Tensor::ResetToPlaceholder() {
  dtype_ = DATA_TYPE_UNSPECIFIED;
  shape_ = Shape({0});
  num_bytes_ = 0;
  buffer_.reset();
}

absl::StatusOr<Tensor> Tensor::Allocate(DataType dtype, Shape shape, Contents contents) {
  absl::StatusOr<size_t> element_size = DataTypeSize(dtype);
  if (!element_size.ok()) return element_size.status();
  const int64_t n = shape.num_elements();
  if (n > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(*element_size)) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", DataTypeName(dtype), " ",
                                                   shape.DebugString(),
                                                   " would need more than 2^63-1 bytes"));
  }
  const int64_t num_bytes = n * static_cast<int64_t>(*element_size);
  if (num_bytes > kMaxBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("tensor ", DataTypeName(dtype), " ",
                                                     shape.DebugString(), " would need ", num_bytes,
                                                     " bytes, more than the limit of ", kMaxBytes));
  }
  // Rounded up to whole 64-byte lines (and at least one), so the buffer is
  // never null and a vector loop's last load stays inside the allocation.
  const size_t allocated = std::max<size_t>(
      kAlignment, (static_cast<size_t>(num_bytes) + kAlignment - 1) / kAlignment * kAlignment);
  std::unique_ptr<void, AlignedFree> buffer(
      ::operator new (allocated, std::align_val_t{kAlignment}, std::nothrow));
  if (buffer == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", num_bytes,
                                                     " bytes for tensor ", DataTypeName(dtype), " ",
                                                     shape.DebugString()));
  }
  if (contents == Contents::kZeros) std::memset(buffer.get(), 0, allocated);
  return Tensor(dtype, std::move(shape), static_cast<size_t>(num_bytes), std::move(buffer));
}

absl::StatusOr<Tensor> Tensor::Create(DataType dtype, Shape shape) {
  return Allocate(dtype, std::move(shape), Contents::kZeros);
}

absl::StatusOr<Tensor> Tensor::CreateUninitialized(DataType dtype, Shape shape) {
  return Allocate(dtype, std::move(shape), Contents::kUninitialized);
}

Tensor Tensor::Clone() const {
  if (buffer_ == nullptr) return Tensor();
  absl::StatusOr<Tensor> copy = CreateUninitialized(dtype_, shape_);
  CHECK(copy.ok()) << "cloning tensor " << DebugString() << ": " << copy.status();
  std::memcpy(copy->raw_data(), raw_data(), num_bytes_);
  return *std::move(copy);
}

absl::Status Tensor::Reshape(Shape shape) {
  if (shape.num_elements() != num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reshape tensor ", DebugString(), " of ", num_elements(), " elements to ",
        shape.DebugString(), " of ", shape.num_elements(), " elements"));
  }
  shape_ = std::move(shape);
  return absl::OkStatus();
}

std::string Tensor::DebugString() const {
  return absl::StrCat(DataTypeName(dtype_), " ", shape_.DebugString());
}

void Tensor::DieOnTypeMismatch(DataType requested) const {
  LOG(FATAL) << "tensor " << DebugString() << " accessed as " << DataTypeName(requested);
  std::abort();  // LOG(FATAL) does not return; this tells the compiler.
}

void Tensor::DieOnRankNot2() const {
  LOG(FATAL) << "tensor " << DebugString() << " accessed as a matrix, but its rank is "
             << shape_.rank();
  std::abort();
}

}  // namespace pstrain
