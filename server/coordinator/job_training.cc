#include "server/coordinator/job_training.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "server/coordinator/backup_rebuild.h"
#include "server/coordinator/job_failover.h"
#include "server/coordinator/job_resize.h"
#include "server/coordinator/job_rollback.h"

namespace pstrain {
namespace coordinator {

absl::Status TrainJob(JobParts& parts) {
  const std::shared_ptr<const StartedJob> job = parts.control.started();
  BackupRebuilds rebuilds(parts);
  for (;;) {
    const absl::Time deadline =
        std::min(parts.clock.Now() + parts.options.poll_interval, parts.checkpoints.NextDueTime());
    const absl::Status interrupted = parts.control.WaitForChange(deadline);
    if (absl::IsAborted(interrupted)) return interrupted;
    RETURN_IF_ERROR(parts.control.failure());
    if (std::vector<LostReplica> replicas = parts.generation.TakeLostReplicas();
        !replicas.empty()) {
      FailOver(parts, *job, replicas);
    }
    if (std::optional<std::string> lost = parts.generation.lost(); lost.has_value()) {
      RETURN_IF_ERROR(RollBack(parts, *job, *lost));
      continue;
    }
    rebuilds.Tend(*job);
    if (std::optional<int> slots = WantedSlotCount(parts, *job); slots.has_value()) {
      RETURN_IF_ERROR(ResizeSlots(parts, *job, *slots));
      continue;
    }
    const int64_t step = job->step->value();
    std::optional<StopDecision> decision = job->stop->CheckTime(step);
    if (!decision.has_value()) decision = job->CheckEndOfData(step);
    if (absl::IsCancelled(interrupted)) {
      decision = job->stop->Decide(STOP_REASON_USER, "stopped by a user", step);
    }
    if (!decision.has_value()) {
      if (std::optional<std::string> too_many = parts.checkpoints.TakeIfDue(*job->step, *job->data);
          too_many.has_value()) {
        decision = job->stop->Decide(STOP_REASON_CHECKPOINT_FAILURES, *std::move(too_many), step);
      }
    }
    if (decision.has_value()) {
      LOG(INFO) << "job " << parts.job_id << " stops: " << decision->message;
      return absl::OkStatus();
    }
    parts.checkpoints.ApplyRetention();
  }
}

}  // namespace coordinator
}  // namespace pstrain
