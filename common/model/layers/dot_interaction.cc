#include "common/model/layers/dot_interaction.h"

#include <algorithm>

namespace pstrain {
namespace {

std::vector<std::pair<int64_t, int64_t>> LowerTriangle(int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t i = 1; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) pairs.emplace_back(i, j);
  }
  return pairs;
}

float DotOf(const float* a, const float* b, int64_t dim) {
  float sum = 0;
  for (int64_t k = 0; k < dim; ++k) sum += a[k] * b[k];
  return sum;
}

}  // namespace

DotInteraction::DotInteraction(int64_t num_vectors, int64_t dim)
    : num_vectors_(num_vectors), dim_(dim), pairs_(LowerTriangle(num_vectors)) {}

absl::Status DotInteraction::Forward(int64_t batch, const float* x, float* out) const {
  if (batch < 1) return absl::InvalidArgumentError("dot interaction of an empty batch");
  const int64_t width = output_dim();
  for (int64_t b = 0; b < batch; ++b) {
    const float* v = x + b * num_vectors_ * dim_;
    float* o = out + b * width;
    std::copy_n(v, dim_, o);
    float* dots = o + dim_;
    for (const auto& [i, j] : pairs_) *dots++ = DotOf(v + i * dim_, v + j * dim_, dim_);
  }
  return absl::OkStatus();
}

absl::Status DotInteraction::Backward(int64_t batch, const float* x, const float* d_out,
                                      float* dx) const {
  if (batch < 1) return absl::InvalidArgumentError("dot interaction of an empty batch");
  const int64_t width = output_dim();
  for (int64_t b = 0; b < batch; ++b) {
    const float* v = x + b * num_vectors_ * dim_;
    const float* d = d_out + b * width;
    float* dv = dx + b * num_vectors_ * dim_;
    // The first vector is also passed through as it is.
    std::copy_n(d, dim_, dv);
    std::fill(dv + dim_, dv + num_vectors_ * dim_, 0.0f);
    const float* d_dots = d + dim_;
    for (const auto& [i, j] : pairs_) {
      const float g = *d_dots++;
      if (g == 0) continue;
      for (int64_t k = 0; k < dim_; ++k) {
        dv[i * dim_ + k] += g * v[j * dim_ + k];
        dv[j * dim_ + k] += g * v[i * dim_ + k];
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace pstrain
