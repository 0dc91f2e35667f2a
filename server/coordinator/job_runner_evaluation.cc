// The evaluation side of JobRunner: waiting for the evaluation of a final
// checkpoint, and the evaluation-only modes (job_runner.cc holds training).

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/manifest.h"
#include "glog/logging.h"
#include "server/coordinator/job_runner.h"

namespace pstrain {
namespace coordinator {

absl::Status JobRunner::WaitForEvaluation(int64_t step) {
  WaitTracker tracker(
      clock_, absl::StrCat("evaluator/0 to evaluate ", CheckpointDirName(step)),
      clock_.Now() + options_.final_eval_timeout, options_.wait_reports,
      [this](const std::string& message) { LOG(WARNING) << "job " << job_id_ << ": " << message; });
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (evaluations_.count(step) > 0) return absl::OkStatus();
      if (immediately_) return absl::CancelledError("stopped immediately");
      if (auto it = unevaluable_.find(step); it != unevaluable_.end()) {
        return absl::DataLossError(absl::StrCat("the final checkpoint ", CheckpointDirName(step),
                                                " cannot be evaluated: ", it->second));
      }
      if (failure_.has_value()) return *failure_;
    }
    ApplyRetention();  // leases released meanwhile
    SetWaitReason("", tracker);
    if (absl::Status expired = tracker.Check(); !expired.ok()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "evaluator/0 did not report an evaluation of the final checkpoint ",
          CheckpointDirName(step), " within ", FormatWaitAge(options_.final_eval_timeout),
          ": check that it runs and read its log; to end a job without its final evaluation, "
          "stop it immediately"));
    }
    absl::Status interrupted = WaitForChange(clock_.Now() + options_.poll_interval);
    if (absl::IsAborted(interrupted)) return interrupted;
  }
}

absl::Status JobRunner::EvaluateOnly() {
  if (spec_.mode() == JOB_MODE_EVAL) {
    absl::StatusOr<RestorableCheckpointSearch> search =
        FindRestorableCheckpoint(*context_.env, model_dir_);
    if (!search.ok()) {
      return absl::Status(search.status().code(),
                          absl::StrCat("cannot read the checkpoints of checkpoint.model_dir: ",
                                       search.status().message()));
    }
    if (!search->checkpoint.has_value()) {
      return absl::FailedPreconditionError(
          absl::StrCat("checkpoint.model_dir ", model_dir_,
                       " holds no checkpoint to evaluate: train a model there first (mode TRAIN or "
                       "TRAIN_AND_EVAL)"));
    }
    CheckpointInfo info =
        CheckpointInfoFromManifest(search->checkpoint->path, search->checkpoint->manifest);
    info.set_final(true);  // the only one this job evaluates
    feed_->Add(info);
    final_step_ = info.step();
    RefreshCheckpointsInStatus();
    Parts().stop->Decide(STOP_REASON_UNSPECIFIED, absl::StrCat("evaluated ", info.path()),
                         info.step());
    return absl::OkStatus();  // Finish waits for its evaluation
  }
  // Continuous evaluation: every checkpoint that appears, until one marked
  // final has been evaluated, max_seconds, or a stop.
  StopConditions& stop = *Parts().stop;
  for (;;) {
    LookForNewCheckpoints();
    {
      absl::MutexLock lock(&mu_);
      if (failure_.has_value()) return *failure_;
      for (const CheckpointInfo& info : feed_->List()) {
        if (info.final() && evaluations_.count(info.step()) > 0) {
          stop.Decide(STOP_REASON_UNSPECIFIED,
                      absl::StrCat("evaluated the final checkpoint ", info.path()), info.step());
        }
      }
      if (evaluator_done_.has_value()) {
        stop.Decide(STOP_REASON_UNSPECIFIED, *evaluator_done_, 0);
      }
    }
    std::optional<StopDecision> decision = stop.CheckTime(0);
    if (decision.has_value()) return absl::OkStatus();
    absl::Status interrupted = WaitForChange(clock_.Now() + options_.model_dir_poll);
    if (!interrupted.ok()) return interrupted;
  }
}

void JobRunner::LookForNewCheckpoints() {
  absl::StatusOr<std::vector<CheckpointRef>> existing = ListCheckpoints(*context_.env, model_dir_);
  if (!existing.ok()) {
    LOG(WARNING) << "job " << job_id_ << ": cannot list " << model_dir_ << ": "
                 << existing.status();
    return;
  }
  std::set<int64_t> known;
  for (const CheckpointInfo& info : feed_->List()) known.insert(info.step());
  bool added = false;
  for (const CheckpointRef& ref : *existing) {
    if (known.count(ref.step) > 0) continue;
    absl::StatusOr<CheckpointManifest> manifest = ReadManifest(*context_.env, ref.path);
    if (!manifest.ok()) {
      LOG(WARNING) << "job " << job_id_ << ": skipping " << ref.path << ": "
                   << manifest.status().message();
      continue;
    }
    feed_->Add(CheckpointInfoFromManifest(ref.path, *manifest));
    added = true;
  }
  if (added) RefreshCheckpointsInStatus();
}

}  // namespace coordinator
}  // namespace pstrain
