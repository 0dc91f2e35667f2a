// Compiled with -mavx and -ffp-contract=off (see BUILD.bazel): nothing here
// may run before CpuHasAvx() said yes, and no multiply-add may be fused,
// which would round differently from the portable rules.

#include <immintrin.h>

#include <cmath>

#include "common/optimizer/internal/update_kernels.h"

namespace pstrain {
namespace optimizer_internal {

void AdamAvx(const AdamStep& step, const float* grad, int64_t n, float* w, float* m, float* v) {
  const __m256 b1 = _mm256_set1_ps(step.b1), m_scale = _mm256_set1_ps(step.m_scale);
  const __m256 b2 = _mm256_set1_ps(step.b2), v_scale = _mm256_set1_ps(step.v_scale);
  const __m256 lr = _mm256_set1_ps(step.lr), eps = _mm256_set1_ps(step.eps);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(grad + i);
    const __m256 m_new =
        _mm256_add_ps(_mm256_mul_ps(b1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(m_scale, g));
    const __m256 v_new = _mm256_add_ps(_mm256_mul_ps(b2, _mm256_loadu_ps(v + i)),
                                       _mm256_mul_ps(v_scale, _mm256_mul_ps(g, g)));
    const __m256 delta =
        _mm256_div_ps(_mm256_mul_ps(lr, m_new), _mm256_add_ps(_mm256_sqrt_ps(v_new), eps));
    _mm256_storeu_ps(m + i, m_new);
    _mm256_storeu_ps(v + i, v_new);
    _mm256_storeu_ps(w + i, _mm256_sub_ps(_mm256_loadu_ps(w + i), delta));
  }
  for (; i < n; ++i) {
    m[i] = step.b1 * m[i] + step.m_scale * grad[i];
    v[i] = step.b2 * v[i] + step.v_scale * (grad[i] * grad[i]);
    w[i] -= (step.lr * m[i]) / (std::sqrt(v[i]) + step.eps);
  }
}

void AdagradAvx(const AdagradStep& step, const float* grad, int64_t n, float* w, float* acc) {
  const __m256 s = _mm256_set1_ps(step.grad_scale), lr = _mm256_set1_ps(step.lr);
  const __m256 eps = _mm256_set1_ps(step.eps);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_mul_ps(s, _mm256_loadu_ps(grad + i));
    const __m256 acc_new = _mm256_add_ps(_mm256_loadu_ps(acc + i), _mm256_mul_ps(g, g));
    const __m256 delta =
        _mm256_div_ps(_mm256_mul_ps(lr, g), _mm256_add_ps(_mm256_sqrt_ps(acc_new), eps));
    _mm256_storeu_ps(acc + i, acc_new);
    _mm256_storeu_ps(w + i, _mm256_sub_ps(_mm256_loadu_ps(w + i), delta));
  }
  for (; i < n; ++i) {
    const float g = step.grad_scale * grad[i];
    acc[i] += g * g;
    w[i] -= (step.lr * g) / (std::sqrt(acc[i]) + step.eps);
  }
}

}  // namespace optimizer_internal
}  // namespace pstrain
