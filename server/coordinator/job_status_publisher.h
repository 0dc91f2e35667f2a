#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_STATUS_PUBLISHER_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_STATUS_PUBLISHER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/clock/clock.h"
#include "common/clock/interval_gate.h"
#include "common/job/train_summaries.h"
#include "common/optimizer/learning_rate.h"
#include "protos/coordinator.pb.h"
#include "protos/job.pb.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/job_queue.h"
#include "server/coordinator/wait_tracker.h"

namespace pstrain {
namespace coordinator {

// Where a job's status goes besides the queue: its events (WatchJob), the
// journal a restarted coordinator reads, the metrics.
struct JobStatusSinks {
  // Receives each event; may be empty.
  std::function<void(JobEvent event)> publish;
  // Records the job's status after a change it must not forget (a
  // rollback); may be empty.
  std::function<void(const JobStatus& job)> record;
  // May be null.
  CoordinatorMetrics* metrics = nullptr;
};

// A progress report as it reaches the job's status.
struct ReportedProgress {
  // The reporter (HolderName) and its examples per second, when the report
  // covers some time.
  std::string reporter;
  std::optional<double> examples_per_sec;
  // The global step the report raised the job to.
  int64_t step = 0;
  // Set when the reporter trained steps since its last report.
  std::optional<double> loss;
  int epoch = 0;
};

// Keeps one running job's status in the job queue and sends its events:
// what it does now (its reason), its progress (the global step, loss and
// examples per second, which only ever move forward except at a
// rollback), its end. The queue refuses a write only for a job it does not
// know or that is no longer active; the job is active until End, so a
// refusal (a call racing with the end) is logged, not acted on.
// Thread-safe.
class JobStatusPublisher {
 public:
  static constexpr absl::Duration kProgressLogInterval = absl::Seconds(10);

  // `learning_rate`: the job's schedule, reported with each progress event;
  // nullopt for a job that does not train.
  JobStatusPublisher(std::string job_id, JobQueue& jobs, Clock& clock, JobStatusSinks sinks,
                     std::optional<LearningRate> learning_rate = std::nullopt);

  JobStatusPublisher(const JobStatusPublisher&) = delete;
  JobStatusPublisher& operator=(const JobStatusPublisher&) = delete;

  // ---- The job's reason: what it does now. Its event goes out when that
  // changes; a wait's growing age alone does not send one.

  void SetReason(const std::string& reason);
  // `prefix` + "waiting for <what> since <age>".
  void SetWaitReason(absl::string_view prefix, WaitTracker& tracker);

  // ---- Progress.

  // Counts the reporter's rate and publishes the progress (the queue, the
  // training summaries when not null, the event) unless a later step was
  // published already: two workers' reports may arrive in the other order
  // than their steps were counted, and a watcher must not see the step go
  // back.
  void PublishProgress(const ReportedProgress& progress, TrainSummaries* summaries);
  // The sum of every reporter's latest rate.
  double examples_per_sec() const;
  // A reporter that is gone counts no more.
  void ForgetReporter(const std::string& reporter);
  // Training starts (again) at `step`: the one move of the published step
  // backwards, at a rollback; every rate is forgotten.
  void RestartProgressAt(int64_t step);

  // ---- The status.

  absl::StatusOr<JobStatus> Get() const;
  // Changes the job's status; `what` names the change in the log if the
  // queue refuses it.
  void Update(absl::string_view what, const std::function<void(JobStatus&)>& update);
  // Has the journal record the status as it is now.
  void Record();
  // Moves a RUNNING job to FINISHING for `reason` and publishes that.
  void BeginFinishing(StopReason reason, const std::string& message);
  // Ends the job in the queue (moving it to FINISHING first unless it
  // fails) and publishes its final status.
  void End(JobState state, const std::string& message);

  // ---- Events.

  void PublishStatus();
  void Publish(JobEvent event);
  // An eval event for checkpoint `step`, which was not evaluated, with why.
  void PublishSkippedEvaluation(int64_t step, std::string why);

 private:
  void UpdateReason(const std::string& reason, const std::string& what);
  void CheckQueueWrite(absl::string_view what, const absl::Status& written) const;

  const std::string job_id_;
  JobQueue& jobs_;
  Clock& clock_;
  const JobStatusSinks sinks_;
  const std::optional<LearningRate> learning_rate_;

  absl::Mutex reason_mu_;
  // The reason last published, without a wait's age.
  std::string published_reason_ ABSL_GUARDED_BY(reason_mu_);

  mutable absl::Mutex progress_mu_;
  // The newest global step published.
  int64_t published_step_ ABSL_GUARDED_BY(progress_mu_) = 0;
  std::map<std::string, double> rates_ ABSL_GUARDED_BY(progress_mu_);
  double last_loss_ ABSL_GUARDED_BY(progress_mu_) = 0;
  // The progress line in the log (what `kubectl logs` of the coordinator
  // shows while a job trains), every kProgressLogInterval.
  IntervalGate progress_log_ ABSL_GUARDED_BY(progress_mu_){clock_, kProgressLogInterval};
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_STATUS_PUBLISHER_H_
