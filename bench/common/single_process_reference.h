#ifndef PSTRAIN_BENCH_COMMON_SINGLE_PROCESS_REFERENCE_H_
#define PSTRAIN_BENCH_COMMON_SINGLE_PROCESS_REFERENCE_H_

// The reference the cluster benchmarks measure against in the same run: the
// single-process trainer, `pstrain train-local SPEC --output=json`, in its
// own process as a worker is, its JSON answer read back.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pstrain {
namespace bench {

// What one `pstrain train-local` run measured.
struct SingleProcessRun {
  double examples_per_sec = 0;  // examples / train_seconds, as it reports
  int64_t examples = 0;
  double train_seconds = 0;  // training alone: loading and evaluation excluded
  int64_t steps = 0;         // its global step at the end
  int64_t peak_rss_bytes = 0;  // the largest VmRSS seen while it ran
  // CPU seconds it had used at the last look before it ended (polled four
  // times a second, so up to a quarter second short); includes its start-up.
  double cpu_seconds = 0;
};

// Runs `pstrain_path` train-local on the text-format spec at `spec_path`
// with `extra_args` (e.g. "--max_steps=1500"; the spec's or their stop
// condition must end it); its stdout and stderr go to `log_path`, emptied
// first.
// DeadlineExceeded: it ran past `timeout` (it is killed). Internal: it
// failed, or printed no JSON object with examples_per_sec, examples,
// train_seconds and global_step; the message holds the end of its log.
absl::StatusOr<SingleProcessRun> RunSingleProcess(const std::string& pstrain_path,
                                                  const std::string& spec_path,
                                                  const std::vector<std::string>& extra_args,
                                                  const std::string& log_path,
                                                  absl::Duration timeout);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMMON_SINGLE_PROCESS_REFERENCE_H_
