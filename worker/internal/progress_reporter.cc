#include "worker/internal/progress_reporter.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "common/status/error_reason.h"
#include "glog/logging.h"

namespace pstrain {
namespace worker {
namespace internal {

ProgressReporter::ProgressReporter(CoordinatorClient& coordinator, const Assignment& assignment,
                                   int64_t steps_per_loop, Clock& clock, WorkerMetrics* metrics)
    : coordinator_(coordinator),
      assignment_(assignment),
      steps_per_loop_(steps_per_loop),
      clock_(clock),
      metrics_(metrics),
      last_report_(clock.Now()),
      newest_version_(assignment.global_step()) {}

void ProgressReporter::CountStep(int64_t examples, double loss) {
  if (metrics_ != nullptr) metrics_->RecordStep(examples);
  ++steps_;
  examples_ += examples;
  loss_sum_ += loss;
}

void ProgressReporter::NoteVersion(int64_t version) {
  newest_version_ = std::max(newest_version_, version);
}

void ProgressReporter::ReportIfDue() {
  // Not sooner near max_steps: the workers stop there by the shards'
  // answers (StepRunner::reached_max_steps), not by a report's.
  if (steps_ > 0 && steps_ >= steps_per_loop_) Report();
}

void ProgressReporter::ReportAnySteps() {
  if (steps_ > 0) Report();
}

void ProgressReporter::Report() {
  const std::string& job_id = assignment_.job_id();
  const absl::Time now = clock_.Now();
  const double seconds = std::max(1e-9, absl::ToDoubleSeconds(now - last_report_));
  ProgressReport report;
  report.set_job_id(job_id);
  report.set_generation(assignment_.generation());
  report.set_steps(steps_);
  report.set_examples(examples_);
  if (steps_ > 0) report.set_loss(loss_sum_ / static_cast<double>(steps_));
  report.set_seconds(seconds);
  report.set_parameter_version(newest_version_);
  // Only whole loops: the short tail of a lease or a job would skew them.
  if (metrics_ != nullptr && steps_ >= steps_per_loop_) {
    metrics_->SetLoop(report.loss(), examples_ / seconds);
  }
  steps_ = examples_ = 0;
  loss_sum_ = 0;
  last_report_ = now;
  absl::StatusOr<ProgressResponse> response = coordinator_.ReportProgress(report);
  if (EndsRun(response.status())) {
    LOG(INFO) << "job " << job_id << " ended: " << response.status().message();
    training_over_ = true;
  } else if (!response.ok()) {
    // The client keeps the report and sends it before the next one.
    LOG(WARNING) << "job " << job_id
                 << ": progress report not delivered yet: " << response.status();
  } else if (response->stop()) {
    LOG(INFO) << "job " << job_id << ": the coordinator stops training at global step "
              << response->global_step() << " (" << StopReason_Name(response->stop_reason()) << ")";
    training_over_ = true;
  } else if (report.steps() > 0 && progress_log_.Open()) {
    LOG(INFO) << "job " << job_id << ": global step " << response->global_step() << "; this worker "
              << absl::StrFormat("%.0f", report.examples() / seconds) << " examples/s, loss "
              << absl::StrFormat("%.4g", report.loss());
  }
}

}  // namespace internal
}  // namespace worker
}  // namespace pstrain
