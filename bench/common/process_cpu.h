#ifndef PSTRAIN_BENCH_COMMON_PROCESS_CPU_H_
#define PSTRAIN_BENCH_COMMON_PROCESS_CPU_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace pstrain {
namespace bench {

// User plus system CPU seconds process `pid` has used, from fields 14 and
// 15 of <proc_root>/<pid>/stat.
// Unavailable: the file cannot be read (the process is gone).
// Internal: the file is not in the format Linux writes.
absl::StatusOr<double> CpuSeconds(pid_t pid, const std::string& proc_root = "/proc");

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMMON_PROCESS_CPU_H_
