#include "server/coordinator/job_resize.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "server/coordinator/job_rollback.h"
#include "server/coordinator/job_start.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

MemberState StateOf(const JobParts& parts, int worker) {
  absl::StatusOr<Member> member = parts.context.members->Get(MakeTask(TASK_TYPE_WORKER, worker));
  return member.ok() ? member->state() : MEMBER_STATE_UNSPECIFIED;
}

}  // namespace

std::optional<int> WantedSlotCount(const JobParts& parts, const StartedJob& job) {
  if (!job.sync_slots) return std::nullopt;
  const int count = parts.workers.count();
  int wanted = count;
  while (wanted > 1 && StateOf(parts, wanted - 1) == MEMBER_STATE_LEFT) --wanted;
  if (wanted == count) {
    while (wanted < job.max_workers && IsLive(StateOf(parts, wanted))) ++wanted;
  }
  if (wanted == count) return std::nullopt;
  return wanted;
}

absl::Status ResizeSlots(JobParts& parts, const StartedJob& job, int count) {
  const int from = parts.workers.count();
  const int64_t at = job.step->value();
  const std::string change = absl::StrCat("its workers change from ", from, " to ", count);
  LOG(INFO) << "job " << parts.job_id << ": " << change << " at step " << at
            << "; its sync rounds are dealt again for " << count << " worker slots";
  parts.control.MoveTo(JobPhase::kRollingBack);
  parts.rounds.Void(WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "job ", parts.job_id, ": ", change, "; this run's open sync round is void: wait for "
          "the job's new assignment")),
      ERROR_REASON_RUN_ROLLED_BACK));
  parts.status.SetReason(absl::StrCat("training paused: ", change, ", saving a checkpoint"));
  // What every shard applied, with each slot's leases, for the new slots
  // to start from. Recorded as a periodic checkpoint's failure if it fails;
  // the restore then takes the newest good one.
  if (absl::Status saved = parts.checkpoints.TakeNow(*job.step, *job.data); !saved.ok()) {
    LOG(WARNING) << "job " << parts.job_id << ": " << saved
                 << "; the slots are dealt again from the newest good checkpoint";
  }
  parts.workers.ChangeCount(count);
  parts.generation.Advance();
  parts.status.SetReason(absl::StrCat("training paused: ", change, ", restoring"));
  ASSIGN_OR_RETURN(const StartPoint start, RestoreNewestCheckpoint(parts, job, count));
  const int64_t step = start.global_step();
  LOG(INFO) << "job " << parts.job_id << ": " << change << "; training goes on from "
            << (start.checkpoint_dir.empty() ? "fresh variables" : CheckpointDirName(start.step))
            << " at step " << step << " (generation " << parts.generation.number() << ")";
  parts.status.RestartProgressAt(step);
  parts.control.MoveTo(JobPhase::kTraining);
  parts.status.SetReason("");
  PublishAssignments(parts, job, start);
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
