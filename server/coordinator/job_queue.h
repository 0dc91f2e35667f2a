#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_QUEUE_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "protos/job.pb.h"
#include "common/clock/clock.h"

namespace pstrain {
namespace coordinator {

struct JobQueueOptions {
  // Jobs waiting to run. Default 100; Submit beyond it is ResourceExhausted,
  // so a runaway script cannot grow the coordinator without bound.
  int max_queued_jobs = 100;
  // Ended jobs kept in the history that List and Get answer from. Default
  // 1000; beyond it the oldest ended jobs are forgotten.
  int max_ended_jobs = 1000;
  // Runs on each submitted spec once its defaults are filled, before it is
  // queued: it may fill in more of the spec, and an error refuses the job
  // with that error, queueing nothing (see job_limits.h). Default: none.
  std::function<absl::Status(JobSpec&)> admit;
};

// "SUCCEEDED" for JOB_STATE_SUCCEEDED: a state as people read it.
std::string JobStateName(JobState state);

// OK for a submit's request id (SubmitJobRequest.request_id): empty, or 1
// to 128 printable ASCII characters without spaces. InvalidArgument
// otherwise, saying which.
absl::Status ValidateRequestId(absl::string_view request_id);

// The submission number of a job id "<name>-<n>": n, or nullopt when the
// id does not end in "-<n>" with n >= 1.
std::optional<int64_t> JobNumberFromId(absl::string_view job_id);

// The state a job ends in once training stopped for `reason`: STOPPED for a
// user's stop, FAILED for a NaN loss, checkpoints failing in a row or an
// error, SUCCEEDED otherwise (a limit, the target or early stopping was
// reached, or the data ran out).
JobState EndStateFor(StopReason reason);

// The submitted jobs of one coordinator: a FIFO of queued jobs, at most one
// active (RUNNING or FINISHING) job, and the history of ended ones, each
// with its JobStatus. Thread-safe.
//
// States move only forward:
//   QUEUED    -> RUNNING (StartNext) | STOPPED (Stop)
//   RUNNING   -> FINISHING (BeginFinishing, Stop) | FAILED (End)
//   FINISHING -> SUCCEEDED | FAILED | STOPPED (End)
// and an ended job never changes again.
class JobQueue {
 public:
  // InvalidArgument: max_queued_jobs or max_ended_jobs < 1.
  static absl::StatusOr<std::unique_ptr<JobQueue>> Create(Clock& clock,
                                                          JobQueueOptions options = {});

  JobQueue(const JobQueue&) = delete;
  JobQueue& operator=(const JobQueue&) = delete;

  // Fills the spec's defaults, validates it and queues the job behind the
  // others. Returns its status: QUEUED, with a new job id "<name>-<n>"
  // (unique for the coordinator's lifetime) and the filled spec.
  // InvalidArgument: the spec is invalid; the message names every field at
  //   fault.
  // ResourceExhausted: max_queued_jobs jobs are already queued; the
  //   message names the limit and --max_queued_jobs.
  // Any error of options.admit.
  // Admit, then Enqueue.
  absl::StatusOr<JobStatus> Submit(JobSpec spec);

  // The first half of Submit: the spec with its defaults filled, validated
  // and admitted. Errors as Submit's; nothing is queued.
  absl::StatusOr<JobSpec> Admit(JobSpec spec) const;
  // The second half: queues a spec Admit returned, under the client's
  // `request_id` when not empty (FindSubmitted finds the job by it).
  // ResourceExhausted: the queue filled up meanwhile.
  // AlreadyExists: a known job has that request id.
  absl::StatusOr<JobStatus> Enqueue(JobSpec admitted, std::string request_id = "");

  // The job a submit with `request_id` queued, while the coordinator knows
  // it (queued, active or in the history), for a retry of that submit;
  // nullopt when none did. `admitted` is the retried spec as Admit returned
  // it.
  // AlreadyExists: the job was queued with another spec ("request id R
  //   queued job J with another spec; give a new job a new request id").
  absl::StatusOr<std::optional<JobStatus>> FindSubmitted(absl::string_view request_id,
                                                         const JobSpec& admitted) const;
  // Whether a known job was queued under `request_id` (false for "").
  bool KnowsRequest(absl::string_view request_id) const;

  // Moves the oldest queued job to RUNNING and returns it.
  // FailedPrecondition: a job is active (one job runs at a time).
  // NotFound: no job is queued.
  absl::StatusOr<JobStatus> StartNext();

  // Training of the running job stopped for `reason` (`message` says why,
  // for people); its final checkpoint, evaluation and export follow.
  // NotFound: no such job. FailedPrecondition: the job is not RUNNING.
  absl::StatusOr<JobStatus> BeginFinishing(absl::string_view job_id, StopReason reason,
                                           absl::string_view message);

  // Ends the job in `state` (SUCCEEDED, FAILED or STOPPED) with `message`
  // for people, and moves it to the history. A RUNNING job may only fail
  // (its stop reason becomes ERROR unless set).
  // NotFound: no such job. InvalidArgument: `state` does not end a job, or
  //   FAILED comes without a message. FailedPrecondition: the job is not
  //   active, or RUNNING and `state` is not FAILED.
  absl::StatusOr<JobStatus> End(absl::string_view job_id, JobState state,
                                absl::string_view message);

  // A user's stop. A queued job is STOPPED at once; a RUNNING one begins
  // FINISHING with STOP_REASON_USER (its runner then saves the final
  // checkpoint, unless told to skip it, and ends it STOPPED); a job already
  // FINISHING or ended is returned as it is.
  // NotFound: no such job.
  absl::StatusOr<JobStatus> Stop(absl::string_view job_id);

  // Records the newest training progress of the active job.
  // NotFound: no such job. FailedPrecondition: the job is not active (it
  //   ended; its workers should stop).
  absl::Status RecordProgress(absl::string_view job_id, int64_t global_step, double loss,
                              double examples_per_sec);

  // Applies `update` to the active job's status (checkpoints, evaluation
  // results, export path, what it waits for) under the queue's lock. Its
  // id, name, state, stop reason, spec and timestamps are restored after
  // `update` runs: those change only through the methods above. `update`
  // must not call back into the queue.
  // NotFound: no such job. FailedPrecondition: the job is not active.
  absl::Status UpdateStatus(absl::string_view job_id,
                            const std::function<void(JobStatus&)>& update);

  // NotFound: no such job (or it was forgotten from the history).
  absl::StatusOr<JobStatus> Get(absl::string_view job_id) const;

  // Jobs in any of `states` (all when empty), newest submitted first, at
  // most `limit` of them (0: 100).
  // InvalidArgument: limit < 0.
  absl::StatusOr<std::vector<JobStatus>> List(absl::Span<const JobState> states, int limit) const;

  // How many known jobs (queued, active and in the history) are in each
  // state; states without jobs are left out.
  std::map<JobState, int> CountByState() const;

  // The RUNNING or FINISHING job's id, if any.
  std::optional<std::string> active_job_id() const;
  int queued_count() const;

  // ---- Recovery: the jobs of a previous coordinator process, read back
  // from its journal (job_journal.h).

  // Re-creates `job` with its id, name, spec and submit time. A QUEUED,
  // RUNNING or FINISHING job is queued behind the jobs queued so far, as
  // QUEUED with `reason` (recover a job that was running first, so that it
  // starts first and resumes from its model_dir); an ended job joins the
  // history as it is. max_queued_jobs does not apply: a job accepted once
  // is not dropped. Later ids are numbered above the job's.
  // InvalidArgument: the id is not "<name>-<n>", or the state is
  //   unspecified.
  // AlreadyExists: a job with that id or number is known.
  absl::StatusOr<JobStatus> Recover(JobStatus job, absl::string_view reason);

  // Ids given from now on are numbered above `number`, so no id a previous
  // coordinator process gave is given again.
  void ReserveNumbersThrough(int64_t number);

  // Removes a QUEUED job as if it had never been submitted (it could not be
  // made durable). Its number is not given again.
  // NotFound: no such job. FailedPrecondition: the job is not QUEUED.
  absl::Status Withdraw(absl::string_view job_id);

 private:
  JobQueue(Clock& clock, JobQueueOptions options);

  // ResourceExhausted when max_queued_jobs jobs are queued.
  absl::Status CheckRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Finds a job by id; nullptr if unknown.
  JobStatus* Find(absl::string_view job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<JobStatus*> FindOrNotFound(absl::string_view job_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<JobStatus*> FindActive(absl::string_view job_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets job `number` (its id and request id) from every index.
  void Forget(int64_t number) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the end state and time, leaves the active slot or the queue, and
  // trims the history.
  void MarkEnded(JobStatus& job, JobState state, absl::string_view message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the oldest ended jobs beyond max_ended_jobs.
  void TrimHistory() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  Clock& clock_;
  const JobQueueOptions options_;

  mutable absl::Mutex mu_;
  // Every known job by submission number, which orders List.
  std::map<int64_t, JobStatus> jobs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> number_by_id_ ABSL_GUARDED_BY(mu_);
  // Known jobs by the request id of the submit that queued them.
  absl::flat_hash_map<std::string, int64_t> number_by_request_ ABSL_GUARDED_BY(mu_);
  std::deque<int64_t> queued_ ABSL_GUARDED_BY(mu_);
  // Ended jobs, oldest first, for trimming the history.
  std::deque<int64_t> ended_ ABSL_GUARDED_BY(mu_);
  std::optional<int64_t> active_ ABSL_GUARDED_BY(mu_);
  int64_t last_number_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_QUEUE_H_
