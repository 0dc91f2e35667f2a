#include "common/tensor/tensor_shape.h"

#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

// Returns the number of elements, or an error naming what breaks the
// invariants of Shape. Zero dims are left out of the overflow check so that
// a product of any subset of the dims fits in int64_t.
absl::StatusOr<int64_t> CountElements(absl::Span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(Shape::kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape has rank ", dims.size(), ", more than the limit of ", Shape::kMaxRank));
  }
  int64_t nonzero_product = 1;
  bool has_zero = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", DimsString(dims), " has negative dim ", d, " at index ", i));
    }
    if (d == 0) {
      has_zero = true;
      continue;
    }
    if (nonzero_product > std::numeric_limits<int64_t>::max() / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", DimsString(dims), " has more than 2^63-1 elements"));
    }
    nonzero_product *= d;
  }
  return has_zero ? 0 : nonzero_product;
}

}  // namespace

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {
  absl::StatusOr<int64_t> n = CountElements(dims_);
  CHECK(n.ok()) << n.status();
  num_elements_ = *n;
}

absl::StatusOr<Shape> Shape::FromDims(absl::Span<const int64_t> dims) {
  absl::StatusOr<int64_t> n = CountElements(dims);
  if (!n.ok()) return n.status();
  Shape shape;
  shape.dims_.assign(dims.begin(), dims.end());
  shape.num_elements_ = *n;
  return shape;
}

absl::StatusOr<Shape> Shape::FromProto(const TensorShape& proto) { return FromDims(proto.dims()); }

void Shape::ToProto(TensorShape* proto) const {
  proto->mutable_dims()->Assign(dims_.begin(), dims_.end());
}

std::string Shape::DebugString() const { return DimsString(dims_); }

bool ShapeEqualsProto(const Shape& shape, const TensorShape& proto) {
  if (proto.dims_size() != shape.rank()) return false;
  for (int i = 0; i < shape.rank(); ++i) {
    if (proto.dims(i) != shape.dim(i)) return false;
  }
  return true;
}

}  // namespace pstrain
