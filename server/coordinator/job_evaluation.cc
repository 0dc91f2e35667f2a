#include "server/coordinator/job_evaluation.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/manifest.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace coordinator {
namespace {

absl::Status EvaluateNewest(JobParts& parts, StopConditions& stop) {
  const std::string& model_dir = parts.spec.checkpoint().model_dir();
  absl::StatusOr<RestorableCheckpointSearch> search =
      FindRestorableCheckpoint(*parts.context.env, model_dir);
  if (!search.ok()) {
    return absl::Status(search.status().code(),
                        absl::StrCat("cannot read the checkpoints of checkpoint.model_dir: ",
                                     search.status().message()));
  }
  if (!search->checkpoint.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("checkpoint.model_dir ", model_dir,
                     " holds no checkpoint to evaluate: train a model there first (mode TRAIN or "
                     "TRAIN_AND_EVAL)"));
  }
  const CheckpointInfo info =
      CheckpointInfoFromManifest(search->checkpoint->path, search->checkpoint->manifest);
  parts.checkpoints.AddOnlyCheckpoint(info);
  stop.Decide(STOP_REASON_UNSPECIFIED, absl::StrCat("evaluated ", info.path()), info.step());
  return absl::OkStatus();
}

absl::Status FollowModelDir(JobParts& parts, StopConditions& stop) {
  for (;;) {
    parts.checkpoints.LookForNew();
    RETURN_IF_ERROR(parts.control.failure());
    for (const CheckpointInfo& info : parts.checkpoints.feed()->List()) {
      if (info.final() && parts.evaluations.Evaluated(info.step())) {
        stop.Decide(STOP_REASON_UNSPECIFIED,
                    absl::StrCat("evaluated the final checkpoint ", info.path()), info.step());
      }
    }
    if (std::optional<std::string> done = parts.evaluations.evaluator_done(); done.has_value()) {
      stop.Decide(STOP_REASON_UNSPECIFIED, *done, 0);
    }
    if (stop.CheckTime(0).has_value()) return absl::OkStatus();
    RETURN_IF_ERROR(parts.control.WaitForChange(parts.clock.Now() + parts.options.model_dir_poll));
  }
}

}  // namespace

absl::Status EvaluateOnlyJob(JobParts& parts) {
  StopConditions& stop = *parts.control.started()->stop;
  if (parts.spec.mode() == JOB_MODE_EVAL) return EvaluateNewest(parts, stop);
  return FollowModelDir(parts, stop);
}

absl::Status AwaitFinalEvaluation(JobParts& parts, int64_t step) {
  WaitTracker tracker(parts.clock,
                      absl::StrCat("evaluator/0 to evaluate ", CheckpointDirName(step)),
                      parts.clock.Now() + parts.options.final_eval_timeout,
                      parts.options.wait_reports, parts.WarningSink());
  for (;;) {
    if (parts.evaluations.Evaluated(step)) return absl::OkStatus();
    if (parts.control.skips_final_work()) return absl::CancelledError("stopped immediately");
    if (std::optional<std::string> why = parts.evaluations.WhyUnevaluable(step); why.has_value()) {
      return absl::DataLossError(absl::StrCat("the final checkpoint ", CheckpointDirName(step),
                                              " cannot be evaluated: ", *why));
    }
    RETURN_IF_ERROR(parts.control.failure());
    parts.checkpoints.ApplyRetention();  // leases released meanwhile
    parts.status.SetWaitReason("", tracker);
    if (absl::Status expired = tracker.Check(); !expired.ok()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "evaluator/0 did not report an evaluation of the final checkpoint ",
          CheckpointDirName(step), " within ", FormatWaitAge(parts.options.final_eval_timeout),
          ": check that it runs and read its log; to end a job without its final evaluation, "
          "stop it immediately"));
    }
    const absl::Status interrupted =
        parts.control.WaitForChange(parts.clock.Now() + parts.options.poll_interval);
    if (absl::IsAborted(interrupted)) return interrupted;
  }
}

}  // namespace coordinator
}  // namespace pstrain
