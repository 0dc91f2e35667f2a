#ifndef PSTRAIN_COMMON_TENSOR_DTYPE_H_
#define PSTRAIN_COMMON_TENSOR_DTYPE_H_

// Helpers over the wire enum pstrain::DataType (protos/tensor.proto): element
// sizes, names for messages, and the enum value of a C++ element type.

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "protos/tensor.pb.h"

namespace pstrain {

// Returns the size in bytes of one element of `dtype`.
// InvalidArgument: `dtype` is DATA_TYPE_UNSPECIFIED or not a value of the
// enum (a proto3 enum field may carry any integer from the wire).
absl::StatusOr<size_t> DataTypeSize(DataType dtype);

// Returns "float32", "float64", "int32", "int64", "uint8" or "bfloat16"; "unspecified"
// for DATA_TYPE_UNSPECIFIED and "unknown" for any other value. For messages.
absl::string_view DataTypeName(DataType dtype);

namespace dtype_internal {

// Deliberately undefined for types that have no DataType, so a
// DataTypeOf<unsupported>() fails to compile at the call.
template <typename T>
struct DataTypeOfImpl;

template <>
struct DataTypeOfImpl<float> {
  static constexpr DataType kValue = DATA_TYPE_FLOAT32;
};
template <>
struct DataTypeOfImpl<double> {
  static constexpr DataType kValue = DATA_TYPE_FLOAT64;
};
template <>
struct DataTypeOfImpl<int32_t> {
  static constexpr DataType kValue = DATA_TYPE_INT32;
};
template <>
struct DataTypeOfImpl<int64_t> {
  static constexpr DataType kValue = DATA_TYPE_INT64;
};
template <>
struct DataTypeOfImpl<uint8_t> {
  static constexpr DataType kValue = DATA_TYPE_UINT8;
};

}  // namespace dtype_internal

// The DataType whose elements are T: float, double, int32_t, int64_t or
// uint8_t. Any other T (including const-qualified ones) does not compile.
template <typename T>
constexpr DataType DataTypeOf() {
  return dtype_internal::DataTypeOfImpl<T>::kValue;
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TENSOR_DTYPE_H_
