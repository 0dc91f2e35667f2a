// Compiled with -mavx and -ffp-contract=off (see BUILD.bazel): nothing here
// may run before CpuHasAvx() said yes, and no multiply-add may be fused,
// which would round differently from the portable kernels.

#include <immintrin.h>

#include "common/optimizer/internal/update_kernels.h"
#include "common/optimizer/internal/update_rules.h"

namespace pstrain {
namespace optimizer_internal {
namespace {

struct AvxLanes {
  static constexpr int kWidth = 8;
  static AvxLanes Load(const float* p) { return {_mm256_loadu_ps(p)}; }
  static AvxLanes Set1(float x) { return {_mm256_set1_ps(x)}; }
  void Store(float* p) const { _mm256_storeu_ps(p, x); }
  friend AvxLanes operator+(AvxLanes a, AvxLanes b) { return {_mm256_add_ps(a.x, b.x)}; }
  friend AvxLanes operator-(AvxLanes a, AvxLanes b) { return {_mm256_sub_ps(a.x, b.x)}; }
  friend AvxLanes operator*(AvxLanes a, AvxLanes b) { return {_mm256_mul_ps(a.x, b.x)}; }
  friend AvxLanes operator/(AvxLanes a, AvxLanes b) { return {_mm256_div_ps(a.x, b.x)}; }
  friend AvxLanes Sqrt(AvxLanes a) { return {_mm256_sqrt_ps(a.x)}; }
  __m256 x;
};

}  // namespace

void AdamAvx(const AdamStep& step, const float* grad, int64_t n, float* w, float* m, float* v) {
  AdamRule<AvxLanes>(step, grad, n, w, m, v);
}

void AdagradAvx(const AdagradStep& step, const float* grad, int64_t n, float* w, float* acc) {
  AdagradRule<AvxLanes>(step, grad, n, w, acc);
}

}  // namespace optimizer_internal
}  // namespace pstrain
