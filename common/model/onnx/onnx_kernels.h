#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNELS_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNELS_H_

// The forward and backward pass of each ONNX op the import supports.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/config/pass_mode.h"
#include "common/onnx/onnx_values.h"

namespace pstrain {

// What a Forward knows beyond the values.
struct OnnxRunContext {
  PassMode mode = PassMode::kEval;    // kTrain: Dropout draws masks
  std::mt19937_64* random = nullptr;  // Dropout's masks
};

// OnnxKernel::max_inputs of an op that takes any number (Concat).
inline constexpr int kOnnxAnyNumberOfInputs = 1 << 20;

struct OnnxKernel {
  // At plan time, once the batch size is known: checks the node's inputs
  // and sets each output's dims. InvalidArgument saying what does not fit.
  absl::Status (*plan)(const OnnxNode& node, std::vector<OnnxValue>& values);
  // Computes the outputs from the inputs (into outputs sized by `plan`).
  void (*forward)(const OnnxNode& node, std::vector<OnnxValue>& values,
                  const OnnxRunContext& context);
  // Adds d(loss)/d(input) into the grad of every float input that has one
  // (sized like the input; others are empty), from the outputs' grads.
  // Null for ops that only compute int64 shape arithmetic.
  void (*backward)(const OnnxNode& node, std::vector<OnnxValue>& values);
  // Inputs the op takes: the first min_inputs are required.
  int min_inputs = 1;
  int max_inputs = 1;
};

// The kernel of `op` (the default domain), or null.
const OnnxKernel* FindOnnxKernel(absl::string_view op);

// "Add, Concat, ...": every op the import supports, for messages.
std::string SupportedOnnxOps();

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_KERNELS_H_
