#ifndef PSTRAIN_BENCH_COMMON_RESIDENT_MEMORY_H_
#define PSTRAIN_BENCH_COMMON_RESIDENT_MEMORY_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace pstrain {
namespace bench {

// The resident set size (VmRSS) of process `pid` in bytes, from
// <proc_root>/<pid>/status; pid 0 reads the calling process ("self").
// Unavailable: the file cannot be read (the process is gone).
// Internal: the file has no VmRSS line in the format Linux writes.
absl::StatusOr<int64_t> ResidentBytes(pid_t pid, const std::string& proc_root = "/proc");

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMMON_RESIDENT_MEMORY_H_
