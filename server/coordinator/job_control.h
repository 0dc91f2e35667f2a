#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_CONTROL_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_CONTROL_H_

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "server/coordinator/job_phase.h"
#include "server/coordinator/started_job.h"

namespace pstrain {
namespace coordinator {

// How a user stops a job.
enum class StopMode {
  // Training stops; the final checkpoint is saved and evaluated.
  kGraceful,
  // Neither a final checkpoint nor its evaluation: the job ends at once.
  kImmediately,
};

// The running job's state machine (job_phase.h) and what its Run thread
// waits on: a user's stop, the coordinator's abort, a failure found by a
// cluster call, or a poke that something it waits for changed. The Run
// thread moves the phase and waits; cluster calls are admitted by the
// phase, signal, and read. Thread-safe.
class JobControl {
 public:
  JobControl(std::string job_id, Clock& clock);

  JobControl(const JobControl&) = delete;
  JobControl& operator=(const JobControl&) = delete;

  // ---- The phase. Moves come from the Run thread only.

  void MoveTo(JobPhase next);
  // The move from kStarting to kTraining, publishing `started` to the
  // calls admitted from then on. Returns whether a user stopped the job
  // while it was starting.
  bool Start(std::shared_ptr<const StartedJob> started);
  JobPhase phase() const;
  // Admits `call` in the current phase (job_phase.h): the started job, null
  // when the job was stopped while starting.
  absl::StatusOr<std::shared_ptr<const StartedJob>> Admit(JobCall call) const;
  // Null while starting, and when the job was stopped while starting.
  std::shared_ptr<const StartedJob> started() const;
  // Whether workers train on: the phase is kTraining and no user stopped
  // the job.
  bool TrainingGoesOn() const;

  // ---- What ends or interrupts the job.

  void RequestStop(StopMode mode);
  bool stop_requested() const;
  // A stop that skips the final checkpoint and evaluation (a user's, or a
  // rollback that could not finish: the shards disagree).
  void SkipFinalWork();
  bool skips_final_work() const;
  // The coordinator shuts down. Returns false when it was aborted before.
  bool Abort(std::string why);
  bool aborted() const;
  // Why the job must fail (a parameter server lost outside training, the
  // evaluator unable to evaluate it); the first failure stands.
  void Fail(absl::Status why);
  // OK while nothing made the job fail.
  absl::Status failure() const;

  // ---- Workers that heard the stop in a progress report.

  void NoteStopHeard(int worker_index);
  // Those of `workers` (indexes) that have not heard it.
  std::vector<int> NotHeardStop(const std::vector<int>& workers) const;

  // ---- The Run thread's waits.

  // Something the Run thread may wait for changed.
  void Poke();
  // Waits until poked, stopped or aborted, or `deadline`. Returns Aborted
  // (the coordinator's reason) or Cancelled (a user's stop) when either
  // happened, at any time before or during the wait.
  absl::Status WaitForChange(absl::Time deadline);

 private:
  void MoveToLocked(JobPhase next) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Interruption() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string job_id_;
  Clock& clock_;

  mutable absl::Mutex mu_;
  JobPhase phase_ ABSL_GUARDED_BY(mu_) = JobPhase::kStarting;
  // Set with the move out of kStarting, never reset.
  std::shared_ptr<const StartedJob> started_ ABSL_GUARDED_BY(mu_);
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool skip_final_work_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::string> abort_reason_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  std::set<int> stop_heard_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_CONTROL_H_
