#include "common/data/standardization.h"

#include <cmath>

namespace pstrain {

Standardization StandardizationOf(absl::Span<const float> values, int64_t dense_dim) {
  Standardization result;
  result.mean.assign(dense_dim, 0.0f);
  result.scale.assign(dense_dim, 1.0f);
  const int64_t rows = dense_dim > 0 ? static_cast<int64_t>(values.size()) / dense_dim : 0;
  if (rows == 0) return result;
  // Two passes: the mean, then the squared deviations from it, which
  // (unlike sums of squares) keep their precision when the mean is large.
  std::vector<double> sum(dense_dim, 0.0), squares(dense_dim, 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < dense_dim; ++j) sum[j] += values[i * dense_dim + j];
  }
  for (int64_t j = 0; j < dense_dim; ++j) sum[j] /= static_cast<double>(rows);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < dense_dim; ++j) {
      const double deviation = values[i * dense_dim + j] - sum[j];
      squares[j] += deviation * deviation;
    }
  }
  for (int64_t j = 0; j < dense_dim; ++j) {
    result.mean[j] = static_cast<float>(sum[j]);
    const double deviation = std::sqrt(squares[j] / static_cast<double>(rows));
    if (deviation > 0) result.scale[j] = static_cast<float>(1.0 / deviation);
  }
  return result;
}

}  // namespace pstrain
