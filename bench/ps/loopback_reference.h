#ifndef PSTRAIN_BENCH_PS_LOOPBACK_REFERENCE_H_
#define PSTRAIN_BENCH_PS_LOOPBACK_REFERENCE_H_

#include <cstdint>

namespace pstrain {

// Bytes per second of one plain TCP stream over 127.0.0.1: a sender thread
// writes `total_bytes` in `write_bytes` pieces, a receiver reads them. The
// reference the parameter server's transfer rates are compared with.
double LoopbackTcpBytesPerSecond(int64_t total_bytes, int64_t write_bytes);

// Bytes per second of memcpy between two buffers of `bytes` each.
double MemcpyBytesPerSecond(int64_t bytes, int repeats);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_PS_LOOPBACK_REFERENCE_H_
