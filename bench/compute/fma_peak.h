#ifndef PSTRAIN_BENCH_COMPUTE_FMA_PEAK_H_
#define PSTRAIN_BENCH_COMPUTE_FMA_PEAK_H_

namespace pstrain {

// The vector instructions a peak is measured with.
enum class FmaWidth {
  kNone,    // the CPU has neither: no peak
  kAvx2,    // 256-bit
  kAvx512,  // 512-bit
};

const char* FmaWidthName(FmaWidth width);  // "AVX2", "AVX-512", "none"

// The widest FMA this CPU has, no wider than `widest_allowed`: a peak is a
// fair reference for oneDNN's kernels only with the instructions oneDNN
// itself runs (a layer run with AVX-512 against an AVX2 peak shows more
// than 100%).
FmaWidth WidestFma(FmaWidth widest_allowed);

struct FmaPeak {
  double gflops = 0;
  FmaWidth width = FmaWidth::kNone;
};

// Measures this thread's single-precision FMA throughput in GFLOP/s with an
// unrolled loop of independent fused multiply-adds of `width` (12 chains,
// enough to cover the FMA latency on two ports), running for about
// `seconds`: the best of several short runs. 0 GFLOP/s for kNone.
FmaPeak MeasureFmaPeak(FmaWidth width, double seconds);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMPUTE_FMA_PEAK_H_
