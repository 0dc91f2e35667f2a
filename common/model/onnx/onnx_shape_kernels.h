#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_SHAPE_KERNELS_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_SHAPE_KERNELS_H_

// The ops that move elements without computing with them: Flatten,
// Reshape, Squeeze and Unsqueeze (the same elements, other dims), Shape,
// Gather, Concat, Split, Transpose and Pad. Their backward passes add each output
// gradient to the input element it came from.

#include <map>
#include <string>

#include "common/model/onnx/onnx_kernels.h"

namespace pstrain {
namespace onnx_internal {

// Adds the kernels above to `kernels`, by op.
void AddShapeKernels(std::map<std::string, OnnxKernel>& kernels);

}  // namespace onnx_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_SHAPE_KERNELS_H_
