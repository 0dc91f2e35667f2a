#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_SPATIAL_KERNELS_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_SPATIAL_KERNELS_H_

// The ops of an image model: Conv, MaxPool, AveragePool and
// GlobalAveragePool on 2-D images, laid out as ONNX defines them
// ([batch, channels, height, width], weights [out, in, height, width]).
//
// Conv lowers the whole batch to one matrix (im2col) and multiplies it with
// oneDNN's sgemm, forward and backward; the lowering is recomputed in
// Backward rather than kept, which costs one memory pass and keeps no state
// between the passes beyond the values.

#include <map>
#include <string>

#include "common/model/onnx/onnx_kernels.h"

namespace pstrain {
namespace onnx_internal {

// Adds the kernels above to `kernels`, by op.
void AddSpatialKernels(std::map<std::string, OnnxKernel>& kernels);

}  // namespace onnx_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_SPATIAL_KERNELS_H_
