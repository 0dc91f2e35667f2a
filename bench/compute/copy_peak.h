#ifndef PSTRAIN_BENCH_COMPUTE_COPY_PEAK_H_
#define PSTRAIN_BENCH_COMPUTE_COPY_PEAK_H_

#include <cstdint>

namespace pstrain {

// The fastest this thread can read and write memory at a working set of
// `working_set_bytes` (in cache or not): bytes read plus bytes written per
// second by a copy between two buffers of half that each, the best of
// `repeats` copies with glibc's memcpy and as many with a loop of 256-bit
// loads and stores (where the CPU has AVX2). The reference of a
// memory-bound layer: glibc's memcpy alone is no peak on every CPU (on
// some AMD EPYC it copies a buffer in L3 at half the vector loop's rate,
// and a layer then ran past it).
double CopyPeakBytesPerSecond(int64_t working_set_bytes, int repeats);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMPUTE_COPY_PEAK_H_
