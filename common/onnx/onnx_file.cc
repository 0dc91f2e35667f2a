#include "common/onnx/onnx_file.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/whole_file.h"
#include "common/onnx/onnx_external_data.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// ONNX's largest file: one protobuf.
constexpr int64_t kMaxOnnxFileBytes = (int64_t{1} << 31) - 1;

// The `n` elements of `tensor`: `raw` (its raw_data or external data) when
// not empty, else the typed field that holds them.
template <typename T, typename TypedField>
absl::Status DecodeElements(absl::string_view raw, const TypedField& typed, int64_t n,
                            const std::string& what, std::vector<T>* out) {
  if (raw.empty()) {
    out->assign(typed.begin(), typed.end());
  } else {
    out->resize(raw.size() / sizeof(T));
    std::memcpy(out->data(), raw.data(), out->size() * sizeof(T));
  }
  if (static_cast<int64_t>(out->size()) != n || raw.size() % sizeof(T) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " holds ", out->size(), " values for ", n, " elements"));
  }
  return absl::OkStatus();
}

// The bytes of `tensor`'s `n` elements: inline (raw_data, or empty when a
// typed field holds them), or read from its external data file.
absl::StatusOr<std::string> RawBytes(const onnx::TensorProto& tensor, int64_t n, int element_size,
                                     const std::string& data_folder, const std::string& what) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return tensor.raw_data();
  if (data_folder.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     " keeps its data in an external file, and a graph not read from a file has no "
                     "folder to find it in"));
  }
  PosixEnv env;
  return ReadOnnxExternalData(env, data_folder, tensor, n * element_size, what);
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ParseOnnxModel(absl::string_view bytes,
                                                const std::string& origin) {
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_graph()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": does not parse as an ONNX model (truncated or not ONNX)"));
  }
  return model;
}

absl::StatusOr<onnx::ModelProto> ReadOnnxModel(const std::string& path) {
  PosixEnv env;
  absl::StatusOr<std::string> bytes = ReadWholeFile(env, path, kMaxOnnxFileBytes);
  if (absl::IsResourceExhausted(bytes.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is larger than an ONNX file can be (2 GB)"));
  }
  if (!bytes.ok()) return bytes.status();
  return ParseOnnxModel(*bytes, path);
}

absl::StatusOr<OnnxValue> DecodeOnnxTensor(const onnx::TensorProto& tensor, const std::string& what,
                                           const std::string& data_folder) {
  OnnxValue value;
  value.dims.assign(tensor.dims().begin(), tensor.dims().end());
  value.known = true;
  if (OnnxElements(value.dims) < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has negative dims or more than ", kMaxOnnxValueElements, " elements"));
  }
  const int64_t n = value.num_elements();
  if (tensor.data_type() == onnx::TensorProto::FLOAT) {
    ASSIGN_OR_RETURN(const std::string raw, RawBytes(tensor, n, sizeof(float), data_folder, what));
    RETURN_IF_ERROR(DecodeElements(raw, tensor.float_data(), n, what, &value.floats));
    return value;
  }
  if (tensor.data_type() == onnx::TensorProto::INT64) {
    value.is_int64 = true;
    ASSIGN_OR_RETURN(const std::string raw,
                     RawBytes(tensor, n, sizeof(int64_t), data_folder, what));
    RETURN_IF_ERROR(DecodeElements(raw, tensor.int64_data(), n, what, &value.ints));
    return value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, " has element type ", tensor.data_type(), "; float32 and int64 load"));
}

absl::StatusOr<absl::flat_hash_map<std::string, std::vector<float>>> ReadOnnxInitializers(
    const std::string& path, absl::Span<const std::string> names) {
  ASSIGN_OR_RETURN(const onnx::ModelProto model, ReadOnnxModel(path));
  const absl::flat_hash_set<std::string> wanted(names.begin(), names.end());
  absl::flat_hash_map<std::string, std::vector<float>> values;
  for (const onnx::TensorProto& tensor : model.graph().initializer()) {
    if (!wanted.contains(tensor.name())) continue;
    const std::string what = absl::StrCat(path, ": initializer ", tensor.name());
    ASSIGN_OR_RETURN(OnnxValue value, DecodeOnnxTensor(tensor, what, Dirname(path)));
    if (value.is_int64) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is int64, not float32"));
    }
    for (float v : value.floats) {
      if (!std::isfinite(v)) {
        return absl::InvalidArgumentError(absl::StrCat(what, " holds ", v, ", not a finite value"));
      }
    }
    values[tensor.name()] = std::move(value.floats);
  }
  for (const std::string& name : names) {
    if (!values.contains(name)) {
      return absl::NotFoundError(absl::StrCat(path, ": has no initializer ", name));
    }
  }
  return values;
}

absl::StatusOr<std::vector<float>> ReadOnnxInitializer(const std::string& path,
                                                       const std::string& name) {
  ASSIGN_OR_RETURN(auto values, ReadOnnxInitializers(path, {name}));
  return std::move(values[name]);
}

}  // namespace pstrain
