// Fuzzes the ONNX import's loader (common/model/onnx/onnx_program.h): the
// bytes as an ONNX file, as a submit loads one. Besides "no crash", checks
// what a user relies on: a refusal is InvalidArgument with a message, and a
// graph that loads runs forward and backward for batches of 1 and 3 with
// its own initializer values (features or ids), its output of the width it
// declared.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/model/onnx/onnx_program.h"
#include "common/onnx/onnx_file.h"
#include "common/tensor/tensor.h"
#include "glog/logging.h"
#include "tests/fuzz/quiet_logs.h"

namespace pstrain {
namespace {

// The graph's parameters from its own initializer values, decoded from
// `bytes`, the file the program loaded. A graph over ids reads id 0 for
// every field: each table gives its first row (zeros for a table of no
// rows).
struct Parameters {
  std::map<std::string, Tensor> dense;
  std::map<std::string, EmbeddingRows> tables;
  ParameterView view;

  Parameters(const OnnxProgram& program, absl::string_view bytes) {
    absl::StatusOr<onnx::ModelProto> model = ParseOnnxModel(bytes, "fuzz.onnx");
    CHECK(model.ok()) << model.status();  // it loaded
    std::map<std::string, std::vector<float>> values;
    for (const onnx::TensorProto& tensor : model->graph().initializer()) {
      absl::StatusOr<OnnxValue> value = DecodeOnnxTensor(tensor, tensor.name(), /*data_folder=*/"");
      CHECK(value.ok()) << value.status();
      values[tensor.name()] = std::move(value->floats);
    }
    for (const OnnxInitializer& init : program.initializers()) {
      const std::vector<float>& own = values.at(init.name);
      const bool table = init.embedding_table;
      absl::StatusOr<Tensor> tensor =
          Tensor::Create(DATA_TYPE_FLOAT32, table ? Shape({1, init.dims[1]}) : Shape(init.dims));
      CHECK(tensor.ok()) << tensor.status();
      std::memset(tensor->raw_data(), 0, tensor->num_bytes());
      std::memcpy(tensor->raw_data(), own.data(),
                  std::min(tensor->num_bytes(), own.size() * sizeof(float)));
      if (!table) {
        dense.emplace(init.name, std::move(tensor).value());
        continue;
      }
      EmbeddingRows rows;
      rows.ids = {0};
      rows.values = std::move(tensor).value();
      tables.emplace(init.name, std::move(rows));
    }
    for (const auto& [name, tensor] : dense) view.dense[name] = &tensor;
    for (const auto& [name, rows] : tables) view.rows[name] = &rows;
  }
};

void RunLoaded(OnnxProgram& program, absl::string_view bytes) {
  const Parameters parameters(program, bytes);
  for (int64_t batch : {1, 3}) {
    // Every input's values: features of 0.5, ids of 0 (the one row given).
    std::vector<std::vector<float>> features;
    std::vector<std::vector<int64_t>> ids;
    std::vector<OnnxInputData> inputs;
    for (const OnnxGraphInput& input : program.inputs()) {
      features.emplace_back(batch * input.width, 0.5f);
      ids.emplace_back(batch * input.width, 0);
      OnnxInputData data;
      if (input.is_int64) {
        data.ids = ids.back().data();
      } else {
        data.floats = features.back().data();
      }
      inputs.push_back(data);
    }
    absl::StatusOr<const float*> output =
        program.Forward(parameters.view, batch, inputs, PassMode::kTrain, /*seed=*/7);
    if (!output.ok()) {
      // A batch size the graph's shapes cannot take (a Reshape to a fixed
      // batch) is refused, never crashed on.
      CHECK(absl::IsInvalidArgument(output.status())) << output.status();
      continue;
    }
    const std::vector<float> d_output(batch * program.output_width(), 1.0f);
    Gradients gradients;
    absl::Status backward = program.Backward(parameters.view, d_output.data(), &gradients);
    CHECK(backward.ok()) << backward;
    CHECK_EQ(gradients.dense.size(), parameters.dense.size());
    CHECK_EQ(gradients.rows.size(), parameters.tables.size());
  }
}

}  // namespace
}  // namespace pstrain

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::QuietLogs();
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<pstrain::OnnxProgram>> program =
      pstrain::OnnxProgram::Parse(bytes, "fuzz.onnx");
  if (!program.ok()) {
    CHECK(absl::IsInvalidArgument(program.status())) << program.status();
    CHECK(!program.status().message().empty());
    return 0;
  }
  pstrain::RunLoaded(**program, bytes);
  return 0;
}
