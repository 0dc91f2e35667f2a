#ifndef PSTRAIN_COMMON_METRICS_PROCESS_STATS_H_
#define PSTRAIN_COMMON_METRICS_PROCESS_STATS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace pstrain {

// What the operating system knows about this process's use of the machine,
// as Prometheus' standard process_* metrics report it.
struct ProcessStats {
  double cpu_seconds = 0;         // user + system CPU time
  int64_t resident_bytes = 0;     // resident set size
  int64_t virtual_bytes = 0;      // virtual memory size
  double start_time_seconds = 0;  // since the Unix epoch
  int64_t open_fds = 0;
  double max_fds = 0;  // the soft limit; +Inf when unlimited
};

// Reads the stats of the calling process from `proc_root` (the /proc
// filesystem; tests pass a folder laid out like it): <root>/self/stat,
// <root>/self/fd/, <root>/self/limits and the boot time in <root>/stat.
// Unavailable: a file cannot be read (not Linux, /proc not mounted).
// Internal: a file is not in the format Linux writes.
absl::StatusOr<ProcessStats> ReadProcessStats(const std::string& proc_root = "/proc");

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_METRICS_PROCESS_STATS_H_
