#ifndef PSTRAIN_BENCH_PS_LOOPBACK_REFERENCE_H_
#define PSTRAIN_BENCH_PS_LOOPBACK_REFERENCE_H_

#include <cstdint>

namespace pstrain {

// One plain TCP stream over 127.0.0.1: a sender thread writes
// `total_bytes` in `write_bytes` pieces, a receiver thread reads them. The
// reference the parameter server's transfer rates are compared with, in
// time and in CPU: each byte is written once and read once, as a pushed or
// pulled byte is, so bytes_per_cpu_second is what any path over TCP
// sockets on this machine can at best move per second of CPU.
struct LoopbackTcp {
  double bytes_per_second = 0;
  // Bytes received per second of the process's user + system time while
  // the stream ran (both threads, the kernel's copies included).
  double bytes_per_cpu_second = 0;
};
LoopbackTcp MeasureLoopbackTcp(int64_t total_bytes, int64_t write_bytes);

// Bytes per second of memcpy between two buffers of `bytes` each.
double MemcpyBytesPerSecond(int64_t bytes, int repeats);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_PS_LOOPBACK_REFERENCE_H_
