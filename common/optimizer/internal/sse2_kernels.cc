// The portable kernels: SSE2 is part of x86-64. Compiled with
// -ffp-contract=off like the AVX ones, so that no multiply-add is fused.

#include <emmintrin.h>

#include "common/optimizer/internal/update_kernels.h"
#include "common/optimizer/internal/update_rules.h"

namespace pstrain {
namespace optimizer_internal {
namespace {

struct Sse2Lanes {
  static constexpr int kWidth = 4;
  static Sse2Lanes Load(const float* p) { return {_mm_loadu_ps(p)}; }
  static Sse2Lanes Set1(float x) { return {_mm_set1_ps(x)}; }
  void Store(float* p) const { _mm_storeu_ps(p, x); }
  friend Sse2Lanes operator+(Sse2Lanes a, Sse2Lanes b) { return {_mm_add_ps(a.x, b.x)}; }
  friend Sse2Lanes operator-(Sse2Lanes a, Sse2Lanes b) { return {_mm_sub_ps(a.x, b.x)}; }
  friend Sse2Lanes operator*(Sse2Lanes a, Sse2Lanes b) { return {_mm_mul_ps(a.x, b.x)}; }
  friend Sse2Lanes operator/(Sse2Lanes a, Sse2Lanes b) { return {_mm_div_ps(a.x, b.x)}; }
  friend Sse2Lanes Sqrt(Sse2Lanes a) { return {_mm_sqrt_ps(a.x)}; }
  __m128 x;
};

}  // namespace

void AdamSse2(const AdamStep& step, const float* grad, int64_t n, float* w, float* m, float* v) {
  AdamRule<Sse2Lanes>(step, grad, n, w, m, v);
}

void AdagradSse2(const AdagradStep& step, const float* grad, int64_t n, float* w, float* acc) {
  AdagradRule<Sse2Lanes>(step, grad, n, w, acc);
}

}  // namespace optimizer_internal
}  // namespace pstrain
