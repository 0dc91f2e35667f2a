#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_REDUCE_KERNELS_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_REDUCE_KERNELS_H_

// ReduceSum and ReduceMean over float values: what PyTorch writes for a
// sum or mean over some dims (an embedding bag's pooling of its ids'
// rows, say). The axes come as an attribute (ReduceMean to opset 17) or as
// a known int64 input (ReduceSum from 13, ReduceMean from 18); none means
// every axis, unless noop_with_empty_axes makes it the identity.

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
