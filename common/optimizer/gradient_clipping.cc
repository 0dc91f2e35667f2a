#include "common/optimizer/gradient_clipping.h"

#include "Eigen/Core"

namespace pstrain {

double SumOfSquares(absl::Span<const float> values) {
  return Eigen::Map<const Eigen::ArrayXf>(values.data(), static_cast<Eigen::Index>(values.size()))
      .cast<double>()
      .square()
      .sum();
}

float GradientClipScale(double norm, double clip_norm) {
  if (clip_norm <= 0 || !(norm > clip_norm)) return 1.0f;
  return static_cast<float>(clip_norm / norm);
}

}  // namespace pstrain
