#ifndef PSTRAIN_COMMON_OPTIMIZER_GRADIENT_CLIPPING_H_
#define PSTRAIN_COMMON_OPTIMIZER_GRADIENT_CLIPPING_H_

// Clipping by global norm (TensorFlow's clip_by_global_norm): every
// gradient of an update is scaled by one factor so that their joint L2 norm
// is at most OptimizerSpec.clip_norm. The factor goes into
// UpdateStep::grad_scale, so clipping costs no pass over the data beyond
// the norm.

#include "absl/types/span.h"

namespace pstrain {

// The sum of squares of `values`, accumulated in double. Add the sums of
// all the gradients of one update, then take the square root for the norm.
double SumOfSquares(absl::Span<const float> values);

// The factor that brings gradients of global L2 norm `norm` down to
// `clip_norm`: clip_norm / norm when norm > clip_norm, else 1 (also when
// clip_norm <= 0, which means no clipping, and when norm is NaN; callers
// that must refuse non-finite gradients check for them first).
float GradientClipScale(double norm, double clip_norm);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_OPTIMIZER_GRADIENT_CLIPPING_H_
