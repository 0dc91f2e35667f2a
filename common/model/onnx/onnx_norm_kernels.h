#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_NORM_KERNELS_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_NORM_KERNELS_H_

// The normalisations: LayerNormalization (opset 17), which trains, and
// BatchNormalization in its inference form (training_mode 0 or absent, as
// a model exported in eval mode writes it),
//
//   y = scale * (x - mean) / sqrt(var + epsilon) + B    per channel (dim 1),
//
// whose scale and B train while its mean and var stay the statistics the
// file holds: OnnxProgram marks an initializer read only as those
// (OnnxInitializer::trainable false), so it takes no gradient. The
// training form, which updates the statistics from each batch, is refused:
// pstrain keeps no running statistics on the parameter servers.

#include <map>
#include <string>

#include "common/model/onnx/onnx_kernels.h"

namespace pstrain {
namespace onnx_internal {

// Adds the kernels above to `kernels`, by op.
void AddNormKernels(std::map<std::string, OnnxKernel>& kernels);

}  // namespace onnx_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_NORM_KERNELS_H_
