// The portable kernels: SSE2 is part of x86-64. Compiled with
// -ffp-contract=off like the AVX ones, so that no multiply-add is fused.

#include <immintrin.h>

#include <cmath>

#include "common/optimizer/internal/update_kernels.h"

namespace pstrain {
namespace optimizer_internal {

void AdamSse2(const AdamStep& step, const float* grad, int64_t n, float* w, float* m, float* v) {
  const __m128 b1 = _mm_set1_ps(step.b1), m_scale = _mm_set1_ps(step.m_scale);
  const __m128 b2 = _mm_set1_ps(step.b2), v_scale = _mm_set1_ps(step.v_scale);
  const __m128 lr = _mm_set1_ps(step.lr), eps = _mm_set1_ps(step.eps);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 g = _mm_loadu_ps(grad + i);
    const __m128 m_new = _mm_add_ps(_mm_mul_ps(b1, _mm_loadu_ps(m + i)), _mm_mul_ps(m_scale, g));
    const __m128 v_new =
        _mm_add_ps(_mm_mul_ps(b2, _mm_loadu_ps(v + i)), _mm_mul_ps(v_scale, _mm_mul_ps(g, g)));
    const __m128 delta = _mm_div_ps(_mm_mul_ps(lr, m_new), _mm_add_ps(_mm_sqrt_ps(v_new), eps));
    _mm_storeu_ps(m + i, m_new);
    _mm_storeu_ps(v + i, v_new);
    _mm_storeu_ps(w + i, _mm_sub_ps(_mm_loadu_ps(w + i), delta));
  }
  for (; i < n; ++i) {
    m[i] = step.b1 * m[i] + step.m_scale * grad[i];
    v[i] = step.b2 * v[i] + step.v_scale * (grad[i] * grad[i]);
    w[i] -= (step.lr * m[i]) / (std::sqrt(v[i]) + step.eps);
  }
}

void AdagradSse2(const AdagradStep& step, const float* grad, int64_t n, float* w, float* acc) {
  const __m128 s = _mm_set1_ps(step.grad_scale), lr = _mm_set1_ps(step.lr);
  const __m128 eps = _mm_set1_ps(step.eps);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 g = _mm_mul_ps(s, _mm_loadu_ps(grad + i));
    const __m128 acc_new = _mm_add_ps(_mm_loadu_ps(acc + i), _mm_mul_ps(g, g));
    const __m128 delta = _mm_div_ps(_mm_mul_ps(lr, g), _mm_add_ps(_mm_sqrt_ps(acc_new), eps));
    _mm_storeu_ps(acc + i, acc_new);
    _mm_storeu_ps(w + i, _mm_sub_ps(_mm_loadu_ps(w + i), delta));
  }
  for (; i < n; ++i) {
    const float g = step.grad_scale * grad[i];
    acc[i] += g * g;
    w[i] -= (step.lr * g) / (std::sqrt(acc[i]) + step.eps);
  }
}

}  // namespace optimizer_internal
}  // namespace pstrain
