#include "server/coordinator/job_parts.h"

#include <utility>

#include "common/config/job_mode.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {
namespace {

JobStatusSinks SinksOf(const JobRunnerContext& context) {
  JobStatusSinks sinks;
  sinks.publish = context.publish;
  sinks.record = context.record;
  sinks.metrics = context.metrics;
  return sinks;
}

// The schedule progress events report; nullopt for a job that does not
// train. The spec was checked at submit, so Create does not fail here.
std::optional<LearningRate> LearningRateOf(const JobSpec& spec) {
  if (!JobModeTrains(spec.mode())) return std::nullopt;
  absl::StatusOr<LearningRate> rate = LearningRate::Create(spec.optimizer());
  if (!rate.ok()) return std::nullopt;
  return *std::move(rate);
}

}  // namespace

JobParts::JobParts(const JobStatus& job, JobRunnerOptions options, JobRunnerContext context)
    : job_id(job.job_id()),
      spec(job.spec()),
      options(std::move(options)),
      context(std::move(context)),
      clock(*this->context.clock),
      trains(JobModeTrains(spec.mode())),
      evaluates(JobModeEvaluates(spec.mode())),
      control(job_id, clock),
      status(job_id, *this->context.jobs, clock, SinksOf(this->context), LearningRateOf(spec)),
      checkpoints(job_id, spec, *this->context.env, clock, status, evaluations,
                  this->context.metrics),
      generation(clock),
      hand_back(job_id, generation, control),
      rounds(job_id, clock, generation, control, this->context.metrics),
      workers(*this->context.assignments) {}

WaitTracker::Sink JobParts::WarningSink() const {
  return [job_id = job_id](const std::string& message) {
    LOG(WARNING) << "job " << job_id << ": " << message;
  };
}

}  // namespace coordinator
}  // namespace pstrain
