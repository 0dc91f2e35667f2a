#ifndef PSTRAIN_SERVER_COORDINATOR_GLOBAL_STEP_H_
#define PSTRAIN_SERVER_COORDINATOR_GLOBAL_STEP_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace pstrain {
namespace coordinator {

// The job's global step: the count of applied updates, one per round in
// sync mode and one per applied push otherwise. The coordinator is its
// single authority: workers report the updates they had applied, the step
// only grows from them, and it goes back only when the job is restored to a
// checkpoint's step. Thread-safe.
//
// Reports are counted once: each reporter (HolderName: task and
// incarnation) numbers its reports (ProgressReport.sequence), and a report
// whose number was already counted (a retry) changes nothing.
class GlobalStep {
 public:
  explicit GlobalStep(int64_t initial = 0);

  GlobalStep(const GlobalStep&) = delete;
  GlobalStep& operator=(const GlobalStep&) = delete;

  int64_t value() const;

  // Adds `applied_updates` from report `sequence` of `reporter` and returns
  // the step. A sequence at or below the reporter's last counted one is a
  // retry or a reordered old report: nothing is added. Sequence 0 is
  // unnumbered and always counted.
  // InvalidArgument: applied_updates < 0, or the step would overflow.
  absl::StatusOr<int64_t> Advance(absl::string_view reporter, uint64_t sequence,
                                  int64_t applied_updates);

  // Raises the step to `completed_rounds` if it is below: sync mode with
  // every worker in each round counts rounds by the parameter version the
  // workers pulled (ProgressReport.parameter_version), since a worker lost
  // before its next report takes with it the count of the rounds its pushes
  // completed. Returns the step.
  // InvalidArgument: completed_rounds < 0.
  absl::StatusOr<int64_t> RaiseTo(int64_t completed_rounds);

  // Sets the step to a restored checkpoint's, the one way it goes back.
  // Reporters' sequences are kept: their numbering continues.
  // InvalidArgument: step < 0.
  absl::Status RestoreTo(int64_t step);

  // Forgets a reporter whose process was replaced or lost, so its state
  // does not accumulate. A later report of the same reporter counts afresh.
  void ForgetReporter(absl::string_view reporter);

 private:
  mutable absl::Mutex mu_;
  int64_t step_ ABSL_GUARDED_BY(mu_);
  // The last counted sequence of each reporter.
  absl::flat_hash_map<std::string, uint64_t> last_sequence_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_GLOBAL_STEP_H_
