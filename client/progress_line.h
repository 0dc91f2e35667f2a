#ifndef PSTRAIN_CLIENT_PROGRESS_LINE_H_
#define PSTRAIN_CLIENT_PROGRESS_LINE_H_

// The one line that shows how far a job has come, as a live bar on a
// terminal or as a plain line in a log.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace pstrain {

struct ProgressSnapshot {
  int64_t global_step = 0;
  int64_t max_steps = 0;  // 0: no step limit (no bar, no ETA)
  double examples_per_sec = 0;
  double loss = 0;
  // The last evaluation's headline metric, if there was one.
  std::string eval_metric;  // "accuracy"; empty: none yet
  double eval_value = 0;
  std::optional<absl::Duration> eta;
};

// For a terminal, redrawn in place:
// "[########------------]  40%  step 120/300  2345 ex/s  loss 0.4312  accuracy 0.8123  ETA 42s"
std::string FormatProgressBar(const ProgressSnapshot& progress);

// For a log, one per few seconds:
// "step 120/300       loss 0.4312      2345 examples/s  accuracy 0.8123  ETA 42s"
std::string FormatProgressLine(const ProgressSnapshot& progress);

// "42s", "3m05s", "1h02m"; whole seconds.
std::string FormatEta(absl::Duration eta);

// Estimates the time left from the rate of recent steps. Not thread-safe.
class StepRateEstimator {
 public:
  // Records that the job was at `step` at `time`.
  void Add(int64_t step, absl::Time time);

  // Time to reach `max_steps` at the recent rate; nullopt before two samples
  // a moment apart, when the step did not move, or when max_steps is 0.
  std::optional<absl::Duration> Eta(int64_t max_steps) const;

 private:
  // Rate over a sliding window: the step rate moves with throughput changes
  // (an evaluation competing for CPU) without jumping at every report.
  static constexpr absl::Duration kWindow = absl::Seconds(20);

  struct Sample {
    int64_t step;
    absl::Time time;
  };
  std::optional<Sample> oldest_;
  std::optional<Sample> newest_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_PROGRESS_LINE_H_
