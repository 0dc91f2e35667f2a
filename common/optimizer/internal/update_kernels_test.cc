#include "common/optimizer/internal/update_kernels.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace optimizer_internal {
namespace {

// Not a multiple of 4 or 8: the kernels' scalar tails run too.
constexpr int64_t kSize = 1003;

struct Arrays {
  std::vector<float> grad, w, m, v;
};

// Gradients over many magnitudes (and some zeros); slots as after training.
Arrays RandomArrays(uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::uniform_int_distribution<int> exponent(-30, 4);
  Arrays a;
  for (int64_t i = 0; i < kSize; ++i) {
    a.grad.push_back(i % 17 == 0 ? 0.0f : std::ldexp(unit(random), exponent(random)));
    a.w.push_back(unit(random));
    a.m.push_back(unit(random) * 1e-3f);
    a.v.push_back(std::ldexp(std::fabs(unit(random)), exponent(random)));
  }
  return a;
}

// Each element's operations in the order the kernels promise.
void AdamReference(const AdamStep& k, Arrays& a) {
  for (int64_t i = 0; i < kSize; ++i) {
    a.m[i] = k.b1 * a.m[i] + k.m_scale * a.grad[i];
    a.v[i] = k.b2 * a.v[i] + k.v_scale * (a.grad[i] * a.grad[i]);
    a.w[i] -= (k.lr * a.m[i]) / (std::sqrt(a.v[i]) + k.eps);
  }
}

void AdagradReference(const AdagradStep& k, Arrays& a) {
  for (int64_t i = 0; i < kSize; ++i) {
    const float g = k.grad_scale * a.grad[i];
    a.v[i] += g * g;
    a.w[i] -= (k.lr * g) / (std::sqrt(a.v[i]) + k.eps);
  }
}

void ExpectBitwiseEqual(const std::vector<float>& got, const std::vector<float>& want,
                        const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    uint32_t g, w;
    std::memcpy(&g, &got[i], 4);
    std::memcpy(&w, &want[i], 4);
    ASSERT_EQ(g, w) << what << "[" << i << "]: " << got[i] << " against " << want[i];
  }
}

using AdamKernel = void (*)(const AdamStep&, const float*, int64_t, float*, float*, float*);
using AdagradKernel = void (*)(const AdagradStep&, const float*, int64_t, float*, float*);

void CheckAdam(AdamKernel kernel) {
  const AdamStep k{0.9f, 0.1f * 0.5f, 0.999f, 0.001f * 0.25f, 1e-3f * 1.7f, 1e-8f};
  Arrays want = RandomArrays(7), got = want;
  for (int step = 0; step < 3; ++step) {
    AdamReference(k, want);
    kernel(k, got.grad.data(), kSize, got.w.data(), got.m.data(), got.v.data());
  }
  ExpectBitwiseEqual(got.m, want.m, "m");
  ExpectBitwiseEqual(got.v, want.v, "v");
  ExpectBitwiseEqual(got.w, want.w, "w");
}

void CheckAdagrad(AdagradKernel kernel) {
  const AdagradStep k{0.5f, 0.01f, 1e-7f};
  Arrays want = RandomArrays(11), got = want;
  for (int step = 0; step < 3; ++step) {
    AdagradReference(k, want);
    kernel(k, got.grad.data(), kSize, got.w.data(), got.v.data());
  }
  ExpectBitwiseEqual(got.v, want.v, "accumulator");
  ExpectBitwiseEqual(got.w, want.w, "w");
}

TEST(UpdateKernelsTest, Sse2MatchesTheScalarRulesBitwise) {
  CheckAdam(AdamSse2);
  CheckAdagrad(AdagradSse2);
}

TEST(UpdateKernelsTest, AvxMatchesTheScalarRulesBitwise) {
  if (!CpuHasAvx()) GTEST_SKIP() << "this CPU has no AVX";
  CheckAdam(AdamAvx);
  CheckAdagrad(AdagradAvx);
}

TEST(UpdateKernelsTest, TheBestKernelsAreTheWidestThisCpuRuns) {
  const UpdateKernels& best = BestUpdateKernels();
  EXPECT_EQ(best.adam, CpuHasAvx() ? &AdamAvx : &AdamSse2);
  EXPECT_EQ(best.adagrad, CpuHasAvx() ? &AdagradAvx : &AdagradSse2);
}

}  // namespace
}  // namespace optimizer_internal
}  // namespace pstrain
