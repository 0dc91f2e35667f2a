#include "common/optimizer/gradient_clipping.h"

#include <cmath>

#include "Eigen/Core"

namespace pstrain {
namespace {

absl::Span<const float> Values(const Tensor& tensor) {
  return absl::MakeConstSpan(tensor.data<float>(), tensor.num_elements());
}

}  // namespace

double SumOfSquares(absl::Span<const float> values) {
  return Eigen::Map<const Eigen::ArrayXf>(values.data(), static_cast<Eigen::Index>(values.size()))
      .cast<double>()
      .square()
      .sum();
}

double GlobalNorm(const Gradients& gradients) {
  double sum = 0;
  for (const auto& [name, grad] : gradients.dense) sum += SumOfSquares(Values(grad));
  for (const auto& [name, grad] : gradients.rows) sum += SumOfSquares(Values(grad.values));
  return std::sqrt(sum);
}

float GradientClipScale(double norm, double clip_norm) {
  if (clip_norm <= 0 || !(norm > clip_norm)) return 1.0f;
  return static_cast<float>(clip_norm / norm);
}

double ClipByGlobalNorm(double clip_norm, Gradients* gradients) {
  if (clip_norm <= 0) return 0;
  const double norm = GlobalNorm(*gradients);
  if (!std::isfinite(norm)) return norm;
  const float scale = GradientClipScale(norm, clip_norm);
  if (scale == 1.0f) return norm;
  for (auto& [name, grad] : gradients->dense) grad.flat<float>() *= scale;
  for (auto& [name, grad] : gradients->rows) grad.values.flat<float>() *= scale;
  return norm;
}

}  // namespace pstrain
