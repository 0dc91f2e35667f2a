#ifndef PSTRAIN_COMMON_JOB_TRAIN_SUMMARIES_H_
#define PSTRAIN_COMMON_JOB_TRAIN_SUMMARIES_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/optimizer/learning_rate.h"
#include "common/summary/summary_writer.h"

namespace pstrain {

// The job's training scalars, written under model_dir/train as TensorBoard
// event files and scalars.jsonl:
//
//   loss                  mean training loss of the latest progress report
//   learning_rate         the schedule's rate at the global step
//   examples_per_sec      summed over the workers
//   global_step_per_sec   over the last few writes (kRateWindow, at least
//                         kMinRateSpan)
//
// The coordinator is the one place that sees the global step, so it writes
// them rather than each worker. At most one set per `every_steps` global
// steps, so the file stays small however many workers report. Thread-safe:
// progress reports arrive on gRPC threads.
class TrainSummaries {
 public:
  // `every_steps` >= 1. `writer` is owned; `clock` outlives this.
  TrainSummaries(std::unique_ptr<SummaryWriter> writer, LearningRate learning_rate,
                 int64_t every_steps, Clock& clock);
  ~TrainSummaries();

  TrainSummaries(const TrainSummaries&) = delete;
  TrainSummaries& operator=(const TrainSummaries&) = delete;

  // A progress report moved the global step to `step`. Writes when `step`
  // has crossed the next multiple of every_steps since the last write.
  // Errors are logged once, not returned: losing a plot must not stop
  // training.
  void OnProgress(int64_t step, double loss, double examples_per_sec);

  // Writes the last values at `step` if not written yet, then closes the
  // files. Later calls do nothing.
  absl::Status Close(int64_t step);

 private:
  // Which write: one of a progress report, or the last one (Close), which
  // gives a job too short for kMinRateSpan its one rate, over its whole
  // training.
  enum class Write { kProgress, kClosing };

  void WriteLocked(int64_t step, Write write) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // global_step_per_sec at `step`, or nullopt when there is no span to
  // measure it over yet.
  std::optional<double> RateLocked(int64_t step, absl::Time now, Write write)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Workers report in bursts (several reports within milliseconds, then a
  // pause), so the rate between two consecutive writes swings wildly; the
  // rate over this many writes back is what a person wants to see.
  static constexpr int kRateWindow = 5;
  // No rate over less time than this: the first reports of a job arrive
  // together, and 100 steps over 3 ms is no speed anyone trains at.
  static constexpr absl::Duration kMinRateSpan = absl::Seconds(1);

  const LearningRate learning_rate_;
  const int64_t every_steps_;
  Clock& clock_;

  absl::Mutex mu_;
  std::unique_ptr<SummaryWriter> writer_ ABSL_GUARDED_BY(mu_);  // null once closed
  // The step of the last write; nullopt before the first.
  std::optional<int64_t> written_step_ ABSL_GUARDED_BY(mu_);
  // Step and time of the last kRateWindow writes, oldest first.
  std::deque<std::pair<int64_t, absl::Time>> recent_writes_ ABSL_GUARDED_BY(mu_);
  std::optional<std::pair<int64_t, absl::Time>> first_write_ ABSL_GUARDED_BY(mu_);
  bool rate_written_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<double> loss_ ABSL_GUARDED_BY(mu_);
  double examples_per_sec_ ABSL_GUARDED_BY(mu_) = 0;
  bool error_logged_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_TRAIN_SUMMARIES_H_
