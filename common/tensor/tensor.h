#ifndef PSTRAIN_COMMON_TENSOR_TENSOR_H_
#define PSTRAIN_COMMON_TENSOR_TENSOR_H_

// pstrain::Tensor, the dense tensor every module passes around: variables
// on the parameter servers, activations and gradients on the workers.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "Eigen/Core"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/tensor/dtype.h"
#include "common/tensor/tensor_shape.h"
#include "protos/tensor.pb.h"

namespace pstrain {

// Eigen views of a tensor's buffer. They alias the buffer: writes through a
// view change the tensor, and a view must not outlive the tensor.
template <typename T>
using FlatView = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Aligned64>;
template <typename T>
using ConstFlatView = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Aligned64>;
template <typename T>
using MatrixView =
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, Eigen::Aligned64>;
template <typename T>
using ConstMatrixView =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
               Eigen::Aligned64>;

// A dense, row-major tensor that owns its buffer. The buffer is aligned to
// kAlignment bytes, as AVX-512 loads and oneDNN want; that of a created
// tensor is never null, even for zero elements, so memcpy and Eigen need no
// special case. Move-only, since copying parameters by accident is a silent
// cost; Clone() copies on purpose.
//
// Not thread-safe for writes: concurrent readers are fine, a writer needs
// external synchronisation.
class Tensor {
 public:
  static constexpr size_t kAlignment = 64;
  // Larger buffers cannot exist in a 47-bit x86-64 user address space, so
  // they are refused without asking the allocator (which, under a sanitizer,
  // would abort rather than fail).
  static constexpr int64_t kMaxBytes = int64_t{1} << 47;

  // Returns a zero-filled tensor.
  // InvalidArgument: `dtype` is unspecified or unknown, or the byte size
  //   overflows int64_t.
  // ResourceExhausted: the byte size exceeds kMaxBytes or the allocation
  //   fails.
  static absl::StatusOr<Tensor> Create(DataType dtype, Shape shape);

  // As Create, but leaves the contents undefined. For callers that overwrite
  // every byte at once (decoding a message, reading a checkpoint), which
  // would otherwise pay for a pass over memory that is thrown away.
  static absl::StatusOr<Tensor> CreateUninitialized(DataType dtype, Shape shape);

  // Returns a tensor of `shape` holding `values` in row-major order.
  // InvalidArgument: values.size() differs from shape.num_elements().
  template <typename T>
  static absl::StatusOr<Tensor> FromValues(Shape shape, absl::Span<const T> values);

  // An empty placeholder, so that tensors can sit in containers and be
  // assigned later: dtype DATA_TYPE_UNSPECIFIED, shape [0], no elements and
  // a null raw_data(). A moved-from tensor is in the same state.
  Tensor();

  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() = default;

  // A deep copy with its own buffer. The size was allocated once already, so
  // running out of memory here is treated like any other C++ allocation
  // failure (the process dies) rather than returned.
  Tensor Clone() const;

  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return shape_.num_elements(); }
  size_t num_bytes() const { return num_bytes_; }

  void* raw_data() { return buffer_.get(); }
  const void* raw_data() const { return buffer_.get(); }

  // Gives the tensor a new shape with the same number of elements, keeping
  // the buffer. InvalidArgument if the element counts differ.
  absl::Status Reshape(Shape shape);

  // Typed access. T must be the C++ type of dtype() (DataTypeOf<T>() ==
  // dtype()); anything else is a programming error and CHECK-fails.
  template <typename T>
  T* data() {
    CheckType(DataTypeOf<T>());
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    CheckType(DataTypeOf<T>());
    return static_cast<const T*>(raw_data());
  }

  // All elements as a 1-D Eigen array. Same type rule as data<T>().
  template <typename T>
  FlatView<T> flat() {
    return FlatView<T>(data<T>(), num_elements());
  }
  template <typename T>
  ConstFlatView<T> flat() const {
    return ConstFlatView<T>(data<T>(), num_elements());
  }

  // A rank-2 tensor as a row-major Eigen matrix of dim(0) rows and dim(1)
  // columns. Same type rule as data<T>(); a rank other than 2 CHECK-fails.
  template <typename T>
  MatrixView<T> matrix() {
    CheckRank2();
    return MatrixView<T>(data<T>(), shape_.dim(0), shape_.dim(1));
  }
  template <typename T>
  ConstMatrixView<T> matrix() const {
    CheckRank2();
    return ConstMatrixView<T>(data<T>(), shape_.dim(0), shape_.dim(1));
  }

  // "float32 [128, 784]": the type and shape, not the values.
  std::string DebugString() const;

 private:
  struct AlignedFree {
    void operator()(void* p) const;
  };

  Tensor(DataType dtype, Shape shape, size_t num_bytes, std::unique_ptr<void, AlignedFree> buffer);

  // What a new buffer holds.
  enum class Contents {
    kZeros,
    kUninitialized,
  };
  static absl::StatusOr<Tensor> Allocate(DataType dtype, Shape shape, Contents contents);

  // Puts *this in the state of a default-constructed tensor.
  void ResetToPlaceholder();

  void CheckType(DataType requested) const {
    if (ABSL_PREDICT_FALSE(requested != dtype_)) DieOnTypeMismatch(requested);
  }
  void CheckRank2() const {
    if (ABSL_PREDICT_FALSE(shape_.rank() != 2)) DieOnRankNot2();
  }
  // Out of line so that this header does not pull in glog.
  [[noreturn]] void DieOnTypeMismatch(DataType requested) const;
  [[noreturn]] void DieOnRankNot2() const;

  DataType dtype_;
  Shape shape_;
  size_t num_bytes_;
  std::unique_ptr<void, AlignedFree> buffer_;
};

template <typename T>
absl::StatusOr<Tensor> Tensor::FromValues(Shape shape, absl::Span<const T> values) {
  if (values.size() != static_cast<size_t>(shape.num_elements())) {
    return absl::InvalidArgumentError("tensor of shape " + shape.DebugString() + " needs " +
                                      std::to_string(shape.num_elements()) + " values, got " +
                                      std::to_string(values.size()));
  }
  absl::StatusOr<Tensor> tensor = CreateUninitialized(DataTypeOf<T>(), std::move(shape));
  if (tensor.ok() && !values.empty()) {
    std::memcpy(tensor->raw_data(), values.data(), values.size() * sizeof(T));
  }
  return tensor;
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TENSOR_TENSOR_H_
