#ifndef PSTRAIN_COMMON_OPTIMIZER_INTERNAL_UPDATE_RULES_H_
#define PSTRAIN_COMMON_OPTIMIZER_INTERNAL_UPDATE_RULES_H_

// Adam's and Adagrad's per-element rules, written once over a vector of
// floats V: V::kWidth lanes, V::Load, V::Set1, Store, + - * / and Sqrt.
// sse2_kernels.cc and avx_kernels.cc instantiate them with their own V;
// the elements left over after the last whole vector go through OneLane.
//
// Everything here lives in an anonymous namespace on purpose: each kernel
// file is compiled with its own instruction set, and code with external
// linkage compiled twice with different flags could be merged by the
// linker into the wrong copy. Include this from kernel files only.

#include <xmmintrin.h>

#include <cstdint>

#include "common/optimizer/internal/update_kernels.h"

namespace pstrain {
namespace optimizer_internal {
namespace {

// One float in the low lane of an SSE register: the scalar operations
// round exactly as the vector ones (and, unlike std::sqrt, never call out
// to the library).
struct OneLane {
  static constexpr int kWidth = 1;
  static OneLane Load(const float* p) { return {_mm_load_ss(p)}; }
  static OneLane Set1(float x) { return {_mm_set_ss(x)}; }
  void Store(float* p) const { _mm_store_ss(p, x); }
  friend OneLane operator+(OneLane a, OneLane b) { return {_mm_add_ss(a.x, b.x)}; }
  friend OneLane operator-(OneLane a, OneLane b) { return {_mm_sub_ss(a.x, b.x)}; }
  friend OneLane operator*(OneLane a, OneLane b) { return {_mm_mul_ss(a.x, b.x)}; }
  friend OneLane operator/(OneLane a, OneLane b) { return {_mm_div_ss(a.x, b.x)}; }
  friend OneLane Sqrt(OneLane a) { return {_mm_sqrt_ss(a.x)}; }
  __m128 x;
};

// Elements [begin, end) a vector V at a time; returns where it stopped.
template <typename V>
int64_t AdamLanes(const AdamStep& step, const float* grad, int64_t begin, int64_t end, float* w,
                  float* m, float* v) {
  const V b1 = V::Set1(step.b1), m_scale = V::Set1(step.m_scale);
  const V b2 = V::Set1(step.b2), v_scale = V::Set1(step.v_scale);
  const V lr = V::Set1(step.lr), eps = V::Set1(step.eps);
  int64_t i = begin;
  for (; i + V::kWidth <= end; i += V::kWidth) {
    const V g = V::Load(grad + i);
    const V m_new = b1 * V::Load(m + i) + m_scale * g;
    const V v_new = b2 * V::Load(v + i) + v_scale * (g * g);
    m_new.Store(m + i);
    v_new.Store(v + i);
    (V::Load(w + i) - (lr * m_new) / (Sqrt(v_new) + eps)).Store(w + i);
  }
  return i;
}

template <typename V>
void AdamRule(const AdamStep& step, const float* grad, int64_t n, float* w, float* m, float* v) {
  const int64_t done = AdamLanes<V>(step, grad, 0, n, w, m, v);
  AdamLanes<OneLane>(step, grad, done, n, w, m, v);
}

template <typename V>
int64_t AdagradLanes(const AdagradStep& step, const float* grad, int64_t begin, int64_t end,
                     float* w, float* acc) {
  const V s = V::Set1(step.grad_scale), lr = V::Set1(step.lr), eps = V::Set1(step.eps);
  int64_t i = begin;
  for (; i + V::kWidth <= end; i += V::kWidth) {
    const V g = s * V::Load(grad + i);
    const V acc_new = V::Load(acc + i) + g * g;
    acc_new.Store(acc + i);
    (V::Load(w + i) - (lr * g) / (Sqrt(acc_new) + eps)).Store(w + i);
  }
  return i;
}

template <typename V>
void AdagradRule(const AdagradStep& step, const float* grad, int64_t n, float* w, float* acc) {
  const int64_t done = AdagradLanes<V>(step, grad, 0, n, w, acc);
  AdagradLanes<OneLane>(step, grad, done, n, w, acc);
}

}  // namespace
}  // namespace optimizer_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_OPTIMIZER_INTERNAL_UPDATE_RULES_H_
