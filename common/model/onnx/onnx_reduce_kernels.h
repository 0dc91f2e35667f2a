#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_REDUCE_KERNELS_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_REDUCE_KERNELS_H_

// The reductions over float values: ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp and ReduceSumSquare, with keepdims and
// noop_with_empty_axes. Their axes are an attribute up to opset 17 and an
// input from 18 (ReduceSum's from 13); a node of either form loads, the
// input being a constant. Each kernel tells the form by which one the node
// has.
//
// ReduceMax and ReduceMin pass the gradient to the first of equal maxima
// (minima), as MaxPool does.

#include <map>
#include <string>

#include "common/model/onnx/onnx_kernels.h"

namespace pstrain {
namespace onnx_internal {

// Adds the kernels above to `kernels`, by op.
void AddReduceKernels(std::map<std::string, OnnxKernel>& kernels);

}  // namespace onnx_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_REDUCE_KERNELS_H_
