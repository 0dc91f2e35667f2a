#ifndef PSTRAIN_CLIENT_JOB_EVENT_PRINTER_H_
#define PSTRAIN_CLIENT_JOB_EVENT_PRINTER_H_

// Prints the events of a job as `pstrain watch` and `pstrain local` show
// them: a live progress bar or periodic progress lines, a line per
// checkpoint (saved or failed), evaluation and state change; or one JSON
// object per event.

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/output_options.h"
#include "client/progress_line.h"
#include "protos/coordinator.pb.h"

namespace pstrain {

// Not thread-safe: one follower feeds it.
class JobEventPrinter {
 public:
  // `max_steps` (0: none) sizes the bar and the ETA; `headline_metric` is
  // the eval metric shown on the progress line (empty: the first reported).
  // Plain progress lines are printed at most every `plain_interval`; the
  // newest one is always printed before any other event and at Finish().
  JobEventPrinter(std::ostream& out, OutputOptions options, int64_t max_steps,
                  std::string headline_metric,
                  absl::Duration plain_interval = absl::Seconds(5));

  // `now` is when the event arrived (the ETA is measured with it).
  void Print(const JobEvent& event, absl::Time now);

  // Prints a progress line not yet printed and ends the live bar's line, so
  // what follows starts on a line of its own.
  void Finish();

  // A message of the caller's ("stopping job ...") on a line of its own,
  // without breaking the bar.
  void PrintLine(const std::string& line);

 private:
  // Prints "job <id> <what> (<count> times): <last>" when `count` passed
  // *shown, which it becomes.
  void SayOnce(const JobStatus& status, absl::string_view what, int32_t count,
               absl::string_view last, int32_t* shown);
  void PrintProgress(absl::Time now);
  void ClearBar();
  void FlushPendingProgress();

  std::ostream& out_;
  const OutputOptions options_;
  const std::string headline_metric_;
  const absl::Duration plain_interval_;

  ProgressSnapshot snapshot_;
  StepRateEstimator rate_;
  bool bar_shown_ = false;
  bool progress_pending_ = false;  // a plain line not printed yet
  bool limit_line_printed_ = false;  // the line that reached max_steps
  absl::Time last_plain_line_ = absl::InfinitePast();
  std::string last_status_line_;  // a repeated status prints once
  int32_t rollbacks_shown_ = 0;
  int32_t failovers_shown_ = 0;
  int32_t rebuilds_shown_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_JOB_EVENT_PRINTER_H_
