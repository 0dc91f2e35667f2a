#include "common/tensor/dtype.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace pstrain {

absl::StatusOr<size_t> DataTypeSize(DataType dtype) {
  switch (dtype) {
    case DATA_TYPE_FLOAT32:
      return sizeof(float);
    case DATA_TYPE_FLOAT64:
      return sizeof(double);
    case DATA_TYPE_INT32:
      return sizeof(int32_t);
    case DATA_TYPE_INT64:
      return sizeof(int64_t);
    case DATA_TYPE_UINT8:
      return sizeof(uint8_t);
    case DATA_TYPE_BFLOAT16:
      return sizeof(uint16_t);
    case DATA_TYPE_UNSPECIFIED:
      return absl::InvalidArgumentError("dtype is unspecified");
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype ", static_cast<int>(dtype)));
}

absl::string_view DataTypeName(DataType dtype) {
  switch (dtype) {
    case DATA_TYPE_FLOAT32:
      return "float32";
    case DATA_TYPE_FLOAT64:
      return "float64";
    case DATA_TYPE_INT32:
      return "int32";
    case DATA_TYPE_INT64:
      return "int64";
    case DATA_TYPE_UINT8:
      return "uint8";
    case DATA_TYPE_BFLOAT16:
      return "bfloat16";
    case DATA_TYPE_UNSPECIFIED:
      return "unspecified";
    default:
      break;
  }
  return "unknown";
}

}  // namespace pstrain
