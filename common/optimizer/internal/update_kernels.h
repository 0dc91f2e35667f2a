#ifndef PSTRAIN_COMMON_OPTIMIZER_INTERNAL_UPDATE_KERNELS_H_
#define PSTRAIN_COMMON_OPTIMIZER_INTERNAL_UPDATE_KERNELS_H_

#include <cstdint>

namespace pstrain {
namespace optimizer_internal {

// Adam's and Adagrad's rules, the two bound by sqrt and division: four
// floats at a time with SSE2 (every x86-64 CPU), eight with AVX where the
// CPU has it. A parameter server training the Fashion-MNIST MLP spent about
// a quarter of its time in Adam's SSE2 code.
//
// Both kernels take an exact square root (not Eigen's fast-math estimate,
// whose low bits differ between CPU makers) and do each element's
// operations in the same order, without fused multiply-adds: results are
// bitwise the same whichever kernel runs (update_kernels_test checks it).

// True when this CPU runs AVX (and the OS saves its registers).
bool CpuHasAvx();

// m = b1*m + m_scale*g;  v = b2*v + v_scale*(g*g);  w -= (lr*m) / (sqrt(v) + eps).
struct AdamStep {
  float b1, m_scale, b2, v_scale, lr, eps;
};
void AdamSse2(const AdamStep& step, const float* grad, int64_t n, float* w, float* m, float* v);
void AdamAvx(const AdamStep& step, const float* grad, int64_t n, float* w, float* m, float* v);

// acc += (s*g)^2;  w -= (lr*(s*g)) / (sqrt(acc) + eps).
struct AdagradStep {
  float grad_scale, lr, eps;
};
void AdagradSse2(const AdagradStep& step, const float* grad, int64_t n, float* w, float* acc);
void AdagradAvx(const AdagradStep& step, const float* grad, int64_t n, float* w, float* acc);

// The fastest kernels this CPU runs, chosen once.
struct UpdateKernels {
  void (*adam)(const AdamStep&, const float*, int64_t, float*, float*, float*);
  void (*adagrad)(const AdagradStep&, const float*, int64_t, float*, float*);
};
const UpdateKernels& BestUpdateKernels();

}  // namespace optimizer_internal
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_OPTIMIZER_INTERNAL_UPDATE_KERNELS_H_
