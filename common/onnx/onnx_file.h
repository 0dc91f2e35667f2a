#ifndef PSTRAIN_COMMON_ONNX_ONNX_FILE_H_
#define PSTRAIN_COMMON_ONNX_ONNX_FILE_H_

// Reading ONNX files: the model, and its tensors as pstrain's values. Shared
// by the graph loader (onnx_program.h) and by whoever creates an imported
// model's variables from the graph's own initial values (the parameter
// servers, the single-process trainer).

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/onnx/onnx_values.h"
#include "onnx/onnx_pb.h"

namespace pstrain {

// The model held in `bytes`; `origin` names them in messages.
// InvalidArgument: empty, truncated, or not an ONNX model (no graph).
absl::StatusOr<onnx::ModelProto> ParseOnnxModel(absl::string_view bytes, const std::string& origin);

// The model in the file at `path`. NotFound: no such file.
// InvalidArgument naming the file: larger than an ONNX file can be (2 GB),
// or as ParseOnnxModel.
absl::StatusOr<onnx::ModelProto> ReadOnnxModel(const std::string& path);

// A tensor's value: float32 or int64, its data in the file (raw_data or the
// typed field) or in an external data file in `data_folder`, the folder of
// the model's file (onnx_external_data.h); empty for a model that was not
// read from a file. InvalidArgument naming `what`: external data without a
// folder or as ReadOnnxExternalData, another element type, negative or too
// many dims, data that does not fill them. NotFound: no external data file.
absl::StatusOr<OnnxValue> DecodeOnnxTensor(const onnx::TensorProto& tensor, const std::string& what,
                                           const std::string& data_folder);

// The values of the float initializer `name` of the model at `path`, row-major,
// read from the model's external data file when it keeps them there.
// NotFound: no such file, or no initializer of that name. InvalidArgument as
// ReadOnnxModel and DecodeOnnxTensor, or it is not float32, or a value is not
// finite.
absl::StatusOr<std::vector<float>> ReadOnnxInitializer(const std::string& path,
                                                       const std::string& name);

// The values of the float initializers `names` of the model at `path`, by
// name, from one read of the file. Errors as ReadOnnxInitializer.
absl::StatusOr<absl::flat_hash_map<std::string, std::vector<float>>> ReadOnnxInitializers(
    const std::string& path, absl::Span<const std::string> names);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_ONNX_ONNX_FILE_H_
