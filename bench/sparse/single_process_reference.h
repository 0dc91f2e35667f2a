#ifndef PSTRAIN_BENCH_SPARSE_SINGLE_PROCESS_REFERENCE_H_
#define PSTRAIN_BENCH_SPARSE_SINGLE_PROCESS_REFERENCE_H_

// The single-process trainer on the benchmark's job: `pstrain train-local
// SPEC --output=json` run as a child process, its JSON answer read back.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pstrain {

struct SingleProcessFigures {
  double examples_per_sec = 0;  // examples / train_seconds, as it reports
  int64_t examples = 0;
  double train_seconds = 0;
  int64_t peak_rss_bytes = 0;  // the largest VmRSS seen while it ran
  // CPU seconds it had used at the last look before it ended (polled four
  // times a second, so up to a quarter second short); includes its start-up.
  double cpu_seconds = 0;
};

// Runs `pstrain_path` train-local on `spec_path` (whose stop condition
// must end it), its stdout and stderr appended to `log_path`.
// DeadlineExceeded: it ran past `timeout` (it is killed). Internal: it
// failed, or printed no JSON object with examples_per_sec; the message
// holds the end of its log.
absl::StatusOr<SingleProcessFigures> RunSingleProcess(const std::string& pstrain_path,
                                                      const std::string& spec_path,
                                                      const std::string& log_path,
                                                      absl::Duration timeout);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SPARSE_SINGLE_PROCESS_REFERENCE_H_
