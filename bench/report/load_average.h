#ifndef PSTRAIN_BENCH_REPORT_LOAD_AVERAGE_H_
#define PSTRAIN_BENCH_REPORT_LOAD_AVERAGE_H_

#include <string>

namespace pstrain {
namespace bench {

// The machine's load average as /proc/loadavg gives it ("1.52 2.10 3.07"),
// or "unknown". Benchmarks record it at their start and end: the machines
// are shared, and a figure from a loaded run is a lower bound.
std::string LoadAverage();

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_REPORT_LOAD_AVERAGE_H_
