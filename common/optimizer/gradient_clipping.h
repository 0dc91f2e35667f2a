#ifndef PSTRAIN_COMMON_OPTIMIZER_GRADIENT_CLIPPING_H_
#define PSTRAIN_COMMON_OPTIMIZER_GRADIENT_CLIPPING_H_

// Clipping by global norm (TensorFlow's clip_by_global_norm): every
// gradient of one step, dense or rows, is scaled by one factor so that their
// joint L2 norm is at most OptimizerSpec.clip_norm. train-local clips its
// step's gradients and a worker clips its own before they are split over
// the parameter servers, both with ClipByGlobalNorm, so that one worker's
// update is train-local's on any number of shards.

#include "absl/types/span.h"
#include "common/model/parameters.h"

namespace pstrain {

// The sum of squares of `values`, accumulated in double. Add the sums of
// all the gradients of one update, then take the square root for the norm.
double SumOfSquares(absl::Span<const float> values);

// The global L2 norm of every dense gradient and every row gradient of
// `gradients`, accumulated in double. Not finite when a value is not.
double GlobalNorm(const Gradients& gradients);

// The factor that brings gradients of global L2 norm `norm` down to
// `clip_norm`: clip_norm / norm when norm > clip_norm, else 1 (also when
// clip_norm <= 0, which means no clipping, and when norm is NaN; callers
// that must refuse non-finite gradients check for them first).
float GradientClipScale(double norm, double clip_norm);

// With clip_norm > 0: scales every gradient of *gradients in place by
// GradientClipScale(GlobalNorm(*gradients), clip_norm) and returns that
// norm, the one before clipping. A norm that is not finite (inf or NaN)
// scales nothing: what a non-finite gradient means is the caller's to
// decide. With clip_norm <= 0 (no clipping): changes nothing, reads
// nothing, and returns 0.
double ClipByGlobalNorm(double clip_norm, Gradients* gradients);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_OPTIMIZER_GRADIENT_CLIPPING_H_
