#include "server/coordinator/start_point.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/config/job_mode.h"
#include "glog/logging.h"

namespace pstrain {
namespace coordinator {
namespace {

// Prefixes `status`'s message with `context`, keeping its code.
absl::Status Within(absl::string_view context, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(context, status.message()));
}

}  // namespace

absl::StatusOr<StartPoint> FindStartPoint(Env& env, const JobSpec& spec, absl::string_view job_id) {
  const std::string& model_dir = spec.checkpoint().model_dir();
  absl::StatusOr<std::vector<std::string>> collected = CollectAbandonedCheckpoints(env, model_dir);
  if (!collected.ok()) return Within("checkpoint.model_dir: ", collected.status());
  for (const std::string& path : *collected) {
    LOG(INFO) << "job " << job_id << ": removed the unfinished " << path;
  }
  absl::StatusOr<RestorableCheckpointSearch> search = FindRestorableCheckpoint(env, model_dir);
  if (!search.ok()) {
    return Within("cannot read the checkpoints of checkpoint.model_dir: ", search.status());
  }
  for (const SkippedCheckpoint& skipped : search->skipped) {
    LOG(WARNING) << "job " << job_id << ": not resuming from " << skipped.path << ": "
                 << skipped.reason.message();
    absl::StatusOr<std::string> moved = SetAsideDamaged(env, skipped.path);
    if (!moved.ok()) return moved.status();
    LOG(WARNING) << "job " << job_id << ": moved the damaged " << skipped.path << " to " << *moved;
  }
  StartPoint start;
  if (search->checkpoint.has_value()) {
    start.step = search->checkpoint->step;
    start.checkpoint_dir = search->checkpoint->path;
    start.manifest = search->checkpoint->manifest;
    LOG(INFO) << "job " << job_id << ": resuming from " << start.checkpoint_dir;
    return start;
  }
  const std::string& warm = spec.checkpoint().warm_start_from();
  if (!warm.empty()) {
    absl::StatusOr<CheckpointManifest> manifest = VerifyCheckpoint(env, warm);
    if (!manifest.ok()) return Within("checkpoint.warm_start_from: ", manifest.status());
    start.checkpoint_dir = warm;
    start.manifest = *std::move(manifest);
    start.warm_start = true;
  }
  return start;
}

absl::Status CheckRunNotFinished(Env& env, const JobSpec& spec) {
  const int64_t max_steps = spec.stop().max_steps();
  if (!JobModeTrains(spec.mode()) || max_steps <= 0) return absl::OkStatus();
  const std::string& model_dir = spec.checkpoint().model_dir();
  absl::StatusOr<std::vector<CheckpointRef>> checkpoints = ListCheckpoints(env, model_dir);
  // A folder that cannot be listed is the start's to report, with its cause.
  if (!checkpoints.ok() || checkpoints->empty()) return absl::OkStatus();
  const CheckpointRef& newest = checkpoints->back();
  if (newest.step < max_steps) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "checkpoint.model_dir ", model_dir, " holds a finished run: its newest checkpoint, ckpt-",
      newest.step, ", is at or past stop.max_steps ", max_steps,
      ", so the job would end as it started. To train from scratch, give it a new folder "
      "(checkpoint.model_dir, or --model_dir=DIR of pstrain submit and local); to train on "
      "from ckpt-",
      newest.step, ", raise stop.max_steps"));
}

}  // namespace coordinator
}  // namespace pstrain
