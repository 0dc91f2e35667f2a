#ifndef PSTRAIN_SERVER_COORDINATOR_ONE_SHOT_JOB_H_
#define PSTRAIN_SERVER_COORDINATOR_ONE_SHOT_JOB_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "protos/job.pb.h"
#include "server/coordinator/coordinator.h"

namespace pstrain {
namespace coordinator {

// The code a one-shot cluster's processes exit with once its job ended in
// `state` (common/daemon/exit_codes.h): 0 SUCCEEDED, 3 FAILED, 4 STOPPED.
int ExitCodeForJobState(JobState state);

// The job of a one-shot cluster (pstrain-coordinator --job): the one job
// the coordinator runs, after which it shuts the cluster down and every
// member exits with the job's outcome (ExitCodeForJobState), as a
// Kubernetes Job or a Kubeflow TFJob expects of its pods.
//
// The job is submitted under a fixed request id. A coordinator started
// again on the same state folder (a crash, a rescheduled pod) finds it in
// its journal by that id, so the submit answers with that job, resumed
// from its newest checkpoint or already ended, and never queues a second
// run.
class OneShotJob {
 public:
  static constexpr char kRequestId[] = "one-shot";

  // Submits `spec` to `coordinator`, which must outlive the returned
  // object. Errors of Coordinator::SubmitJob: a bad spec, a model_dir that
  // holds a finished run; AlreadyExists when the journal's one-shot job had
  // another spec (the file was edited after the run began).
  static absl::StatusOr<std::unique_ptr<OneShotJob>> Submit(Coordinator& coordinator, JobSpec spec);

  // Stop, then destroys.
  ~OneShotJob();

  OneShotJob(const OneShotJob&) = delete;
  OneShotJob& operator=(const OneShotJob&) = delete;

  // Follows the job on a thread of its own until it ends, then asks the
  // coordinator to shut the cluster down with the job's exit code. Call
  // once, after Coordinator::Start.
  void Start();

  // Stops following the job, so that a coordinator stopping (a signal)
  // does not shut the cluster down as if the job had ended; joins the
  // thread. Call before Coordinator::Stop. Idempotent.
  void Stop();

  const std::string& job_id() const { return job_id_; }

  // The job's state now, as the coordinator knows it.
  JobState state() const;

 private:
  OneShotJob(Coordinator& coordinator, std::string job_id)
      : coordinator_(coordinator), job_id_(std::move(job_id)) {}

  // Until the job has ended or the coordinator stops.
  void Follow();
  // The job ended: says how, and shuts the cluster down.
  void Finish(const JobStatus& job);
  void Wake();

  Coordinator& coordinator_;
  const std::string job_id_;

  mutable absl::Mutex mu_;
  // Counts the watch's wake-ups, so a wake between a poll and the wait is
  // not missed.
  int64_t wakes_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::thread follower_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_ONE_SHOT_JOB_H_
