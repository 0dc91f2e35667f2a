#include "bench/compute/fma_peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace pstrain {
namespace {

volatile float sink;

constexpr int kChains = 12;

// kChains independent accumulators x 8 lanes x 2 FLOP per iteration.
__attribute__((target("avx2,fma"))) void Avx2Loop(int64_t iterations) {
  const __m256 a = _mm256_set1_ps(0.999999f);
  const __m256 b = _mm256_set1_ps(1e-6f);
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(static_cast<float>(k));
  for (int64_t i = 0; i < iterations; ++i) {
    // Written out: each chain must stay in a register in every build.
    acc[0] = _mm256_fmadd_ps(acc[0], a, b);
    acc[1] = _mm256_fmadd_ps(acc[1], a, b);
    acc[2] = _mm256_fmadd_ps(acc[2], a, b);
    acc[3] = _mm256_fmadd_ps(acc[3], a, b);
    acc[4] = _mm256_fmadd_ps(acc[4], a, b);
    acc[5] = _mm256_fmadd_ps(acc[5], a, b);
    acc[6] = _mm256_fmadd_ps(acc[6], a, b);
    acc[7] = _mm256_fmadd_ps(acc[7], a, b);
    acc[8] = _mm256_fmadd_ps(acc[8], a, b);
    acc[9] = _mm256_fmadd_ps(acc[9], a, b);
    acc[10] = _mm256_fmadd_ps(acc[10], a, b);
    acc[11] = _mm256_fmadd_ps(acc[11], a, b);
  }
  __m256 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm256_add_ps(sum, acc[k]);
  float out[8];
  _mm256_storeu_ps(out, sum);
  sink = out[0] + out[7];
}

// kChains independent accumulators x 16 lanes x 2 FLOP per iteration.
__attribute__((target("avx512f"))) void Avx512Loop(int64_t iterations) {
  const __m512 a = _mm512_set1_ps(0.999999f);
  const __m512 b = _mm512_set1_ps(1e-6f);
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(static_cast<float>(k));
  for (int64_t i = 0; i < iterations; ++i) {
    acc[0] = _mm512_fmadd_ps(acc[0], a, b);
    acc[1] = _mm512_fmadd_ps(acc[1], a, b);
    acc[2] = _mm512_fmadd_ps(acc[2], a, b);
    acc[3] = _mm512_fmadd_ps(acc[3], a, b);
    acc[4] = _mm512_fmadd_ps(acc[4], a, b);
    acc[5] = _mm512_fmadd_ps(acc[5], a, b);
    acc[6] = _mm512_fmadd_ps(acc[6], a, b);
    acc[7] = _mm512_fmadd_ps(acc[7], a, b);
    acc[8] = _mm512_fmadd_ps(acc[8], a, b);
    acc[9] = _mm512_fmadd_ps(acc[9], a, b);
    acc[10] = _mm512_fmadd_ps(acc[10], a, b);
    acc[11] = _mm512_fmadd_ps(acc[11], a, b);
  }
  __m512 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm512_add_ps(sum, acc[k]);
  sink = _mm512_reduce_add_ps(sum);
}

int Lanes(FmaWidth width) { return width == FmaWidth::kAvx512 ? 16 : 8; }

}  // namespace

const char* FmaWidthName(FmaWidth width) {
  switch (width) {
    case FmaWidth::kAvx2:
      return "AVX2";
    case FmaWidth::kAvx512:
      return "AVX-512";
    case FmaWidth::kNone:
      break;
  }
  return "none";
}

FmaWidth WidestFma(FmaWidth widest_allowed) {
  __builtin_cpu_init();
  if (widest_allowed == FmaWidth::kAvx512 && __builtin_cpu_supports("avx512f")) {
    return FmaWidth::kAvx512;
  }
  if (widest_allowed != FmaWidth::kNone && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma")) {
    return FmaWidth::kAvx2;
  }
  return FmaWidth::kNone;
}

FmaPeak MeasureFmaPeak(FmaWidth width, double seconds) {
  FmaPeak peak;
  peak.width = width;
  if (width == FmaWidth::kNone) return peak;
  using Clock = std::chrono::steady_clock;
  int64_t iterations = 1 << 20;
  const Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    const Clock::time_point start = Clock::now();
    if (width == FmaWidth::kAvx512) {
      Avx512Loop(iterations);
    } else {
      Avx2Loop(iterations);
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    // The best of several short runs: another process on the core can only
    // slow a run down.
    if (elapsed > 0) {
      peak.gflops =
          std::max(peak.gflops, 2.0 * kChains * Lanes(width) * iterations / elapsed / 1e9);
    }
    if (elapsed < 0.02) iterations *= 2;
  }
  return peak;
}

}  // namespace pstrain
