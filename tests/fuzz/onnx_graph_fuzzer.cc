// Fuzzes the ONNX import's loader (common/model/onnx/onnx_program.h): the
// bytes as an ONNX file, as a submit loads one. Besides "no crash", checks
// what a user relies on: a refusal is InvalidArgument with a message, and a
// graph that loads runs forward and backward for batches of 1 and 3 with
// its own initializer values, its output of the width it declared.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/model/onnx/onnx_program.h"
#include "common/tensor/tensor.h"
#include "glog/logging.h"
#include "tests/fuzz/quiet_logs.h"

namespace pstrain {
namespace {

void RunLoaded(OnnxProgram& program) {
  std::map<std::string, Tensor> tensors;
  ParameterView view;
  for (const OnnxInitializer& init : program.initializers()) {
    absl::StatusOr<Tensor> tensor = Tensor::Create(DATA_TYPE_FLOAT32, Shape(init.dims));
    CHECK(tensor.ok()) << tensor.status();
    std::memcpy(tensor->raw_data(), init.values.data(), init.values.size() * sizeof(float));
    tensors.emplace(init.name, std::move(tensor).value());
  }
  for (const auto& [name, tensor] : tensors) view.dense[name] = &tensor;
  for (int64_t batch : {1, 3}) {
    const std::vector<float> input(batch * program.input_width(), 0.5f);
    absl::StatusOr<const float*> output =
        program.Forward(view, batch, input.data(), ModelMode::kTrain, /*seed=*/7);
    if (!output.ok()) {
      // A batch size the graph's shapes cannot take (a Reshape to a fixed
      // batch) is refused, never crashed on.
      CHECK(absl::IsInvalidArgument(output.status())) << output.status();
      continue;
    }
    const std::vector<float> d_output(batch * program.output_width(), 1.0f);
    Gradients gradients;
    absl::Status backward = program.Backward(view, d_output.data(), &gradients);
    CHECK(backward.ok()) << backward;
    CHECK_EQ(gradients.dense.size(), tensors.size());
  }
}

}  // namespace
}  // namespace pstrain

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::QuietLogs();
  absl::StatusOr<std::unique_ptr<pstrain::OnnxProgram>> program = pstrain::OnnxProgram::Parse(
      absl::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
  if (!program.ok()) {
    CHECK(absl::IsInvalidArgument(program.status())) << program.status();
    CHECK(!program.status().message().empty());
    return 0;
  }
  pstrain::RunLoaded(**program);
  return 0;
}
