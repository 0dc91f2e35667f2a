#ifndef PSTRAIN_BENCH_CLUSTER_SINGLE_PROCESS_REFERENCE_H_
#define PSTRAIN_BENCH_CLUSTER_SINGLE_PROCESS_REFERENCE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pstrain {
namespace bench {

// What `pstrain train-local` measured.
struct SingleProcessRun {
  double examples_per_sec = 0;  // examples / training seconds (load and eval excluded)
  double train_seconds = 0;
  int64_t steps = 0;
};

// Runs `pstrain train-local SPEC --output=json --max_steps=STEPS` (the
// single-process trainer in its own process, as a worker is) on the
// text-format spec `spec_text`, written to `spec_path`; its output goes to
// `log_path`. `pstrain` is found in `bin_dir` or this program's runfiles.
// NotFound: no pstrain binary. DeadlineExceeded: still running after
// `timeout` (it is killed). Internal: it failed or printed no result.
absl::StatusOr<SingleProcessRun> RunSingleProcess(const std::string& spec_text,
                                                  const std::string& spec_path,
                                                  const std::string& log_path, int64_t steps,
                                                  const std::string& bin_dir,
                                                  absl::Duration timeout);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_SINGLE_PROCESS_REFERENCE_H_
