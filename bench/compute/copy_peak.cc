#include "bench/compute/copy_peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace pstrain {
namespace {

// Copies `floats` floats (a multiple of 8).
__attribute__((target("avx2"))) void VectorCopy(const float* from, float* to, int64_t floats) {
  for (int64_t i = 0; i < floats; i += 8) _mm256_storeu_ps(to + i, _mm256_loadu_ps(from + i));
}

// Bytes read and written per second by the best of `repeats` runs of
// `copy`, which copies `bytes` one way and back on alternate runs.
template <typename Copy>
double BestOf(int repeats, int64_t bytes, Copy copy) {
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    copy(r % 2 == 1);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds);
  }
  return best;
}

}  // namespace

double CopyPeakBytesPerSecond(int64_t working_set_bytes, int repeats) {
  // Each buffer half the working set, whole 256-bit vectors.
  const int64_t floats = std::max<int64_t>(working_set_bytes / 2 / sizeof(float) / 8 * 8, 1024);
  const int64_t bytes = floats * static_cast<int64_t>(sizeof(float));
  std::vector<float> a(floats, 1.0f), b(floats, 2.0f);
  auto ends = [&](bool back) {
    return back ? std::make_pair(b.data(), a.data()) : std::make_pair(a.data(), b.data());
  };
  double best = BestOf(repeats, bytes, [&](bool back) {
    const auto [from, to] = ends(back);
    std::memcpy(to, from, bytes);
  });
  if (__builtin_cpu_supports("avx2")) {
    best = std::max(best, BestOf(repeats, bytes, [&](bool back) {
                      const auto [from, to] = ends(back);
                      VectorCopy(from, to, floats);
                    }));
  }
  return best;
}

}  // namespace pstrain
