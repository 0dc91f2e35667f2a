#ifndef PSTRAIN_BENCH_COMPUTE_FMA_PEAK_H_
#define PSTRAIN_BENCH_COMPUTE_FMA_PEAK_H_

namespace pstrain {

// Measures this thread's single-precision FMA throughput in GFLOP/s with an
// unrolled loop of independent AVX2 fused multiply-adds (12 chains, enough
// to cover the FMA latency on both ports), running for about `seconds`.
// Returns 0 on a CPU without AVX2 and FMA.
double MeasureFmaPeakGflops(double seconds);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMPUTE_FMA_PEAK_H_
