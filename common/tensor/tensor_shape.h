#ifndef PSTRAIN_COMMON_TENSOR_TENSOR_SHAPE_H_
#define PSTRAIN_COMMON_TENSOR_TENSOR_SHAPE_H_

// pstrain::Shape, the dimensions of a dense tensor.
//
// The class is named Shape, not TensorShape, because pstrain::TensorShape is
// already the wire message in protos/tensor.proto; Shape::FromProto and
// Shape::ToProto convert between the two.

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "protos/tensor.pb.h"

namespace pstrain {

// Dimensions in row-major order; a scalar has none. A Shape is always valid:
// rank <= kMaxRank, every dim >= 0, and the product of the nonzero dims fits
// in int64_t, so num_elements() and the product of any subset of the dims
// cannot overflow. A Shape is a value type; const methods are thread-safe.
class Shape {
 public:
  // Far above any layer's needs (oneDNN stops at 12); bounds the work a
  // hostile shape from the network can cause.
  static constexpr int kMaxRank = 32;

  // A scalar: rank 0, one element.
  Shape() = default;

  // For dims written in code, e.g. Shape({128, 784}). Dims that break the
  // invariants above are a programming error and CHECK-fail; use FromDims or
  // FromProto for dims that come from data, a file or the network.
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::vector<int64_t> dims);

  // InvalidArgument, naming the offending dim: more than kMaxRank dims, a
  // negative dim, or more than 2^63-1 elements.
  static absl::StatusOr<Shape> FromDims(absl::Span<const int64_t> dims);
  static absl::StatusOr<Shape> FromProto(const TensorShape& proto);

  // Replaces the contents of *proto.
  void ToProto(TensorShape* proto) const;

  int rank() const { return static_cast<int>(dims_.size()); }
  // Requires 0 <= i < rank().
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  // The product of the dims: 1 for a scalar, 0 if any dim is 0.
  int64_t num_elements() const { return num_elements_; }

  // "[128, 784]"; "[]" for a scalar.
  std::string DebugString() const;

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
  friend std::ostream& operator<<(std::ostream& os, const Shape& shape) {
    return os << shape.DebugString();
  }

 private:
  std::vector<int64_t> dims_;
  int64_t num_elements_ = 1;
};

// Returns true if `proto` has exactly the dims of `shape`, without building
// a Shape: for checking that every piece of a chunked tensor agrees.
bool ShapeEqualsProto(const Shape& shape, const TensorShape& proto);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TENSOR_TENSOR_SHAPE_H_
