#include "server/coordinator/job_checkpoints.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/manifest.h"
#include "common/config/job_mode.h"
#include "common/config/job_spec_defaults.h"
#include "glog/logging.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace coordinator {

JobCheckpoints::JobCheckpoints(std::string job_id, const JobSpec& spec, Env& env, Clock& clock,
                               JobStatusPublisher& status, EvaluationLedger& evaluations,
                               CoordinatorMetrics* metrics)
    : job_id_(std::move(job_id)),
      model_dir_(spec.checkpoint().model_dir()),
      spec_(spec),
      trains_(JobModeTrains(spec.mode())),
      env_(env),
      clock_(clock),
      status_(status),
      evaluations_(evaluations),
      metrics_(metrics),
      feed_(std::make_shared<CheckpointFeed>()),
      retention_(std::make_shared<RetentionPolicy>(MaxToKeepOf(spec.checkpoint()))),
      failures_(MaxConsecutiveFailuresOf(spec.checkpoint())) {}

void JobCheckpoints::Attach(const ShardGroup& shards, SnapshotHold* hold) {
  absl::MutexLock lock(&mu_);
  checkpointer_ = std::make_unique<JobCheckpointer>(env_, shards, model_dir_, job_id_, spec_, hold);
}

JobCheckpointer* JobCheckpoints::checkpointer() const {
  absl::MutexLock lock(&mu_);
  return checkpointer_.get();
}

std::shared_ptr<CheckpointSchedule> JobCheckpoints::schedule() const {
  absl::MutexLock lock(&mu_);
  return schedule_;
}

absl::Status JobCheckpoints::Restore(const StartPoint& start) {
  if (start.checkpoint_dir.empty()) return absl::OkStatus();
  return checkpointer()->Restore(start.checkpoint_dir, start.manifest);
}

void JobCheckpoints::StartScheduleAt(int64_t step) {
  auto schedule = std::make_shared<CheckpointSchedule>(spec_.checkpoint(), clock_, step);
  absl::MutexLock lock(&mu_);
  schedule_ = std::move(schedule);
}

absl::Time JobCheckpoints::NextDueTime() const { return schedule()->NextDueTime(); }

std::optional<std::string> JobCheckpoints::TakeIfDue(GlobalStep& global_step,
                                                     const DataLeaseManager& data) {
  const int64_t step = global_step.value();
  const std::shared_ptr<CheckpointSchedule> schedule = this->schedule();
  if (schedule->Due(step) == CheckpointTrigger::kNone) return std::nullopt;
  if (Take(global_step, data, CheckpointKind::kPeriodic).ok()) return std::nullopt;
  schedule->RecordFailed(step);
  absl::MutexLock lock(&mu_);
  return failures_.TooMany();
}

absl::Status JobCheckpoints::TakeNow(GlobalStep& global_step, const DataLeaseManager& data) {
  // One taken at this step already holds what the shards hold now.
  for (const CheckpointInfo& info : feed_->List()) {
    if (info.step() == global_step.value()) return absl::OkStatus();
  }
  return Take(global_step, data, CheckpointKind::kPeriodic).status();
}

absl::Status JobCheckpoints::TakeFinal(GlobalStep& global_step, const DataLeaseManager& data) {
  const int64_t step = global_step.value();
  for (const CheckpointInfo& info : feed_->List()) {
    if (info.step() != step) continue;
    if (info.final() || retention_->IsLeased(step)) {
      MarkFinal(step);
      return absl::OkStatus();
    }
    if (absl::Status deleted = checkpointer()->Delete(step); !deleted.ok()) {
      LOG(WARNING) << "job " << job_id_ << ": " << deleted << "; announcing ckpt-" << step
                   << " as the final checkpoint as it is";
      MarkFinal(step);
      return absl::OkStatus();
    }
    feed_->Remove(step);
  }
  absl::StatusOr<CheckpointInfo> info = Take(global_step, data, CheckpointKind::kFinal);
  if (!info.ok()) return info.status();
  absl::MutexLock lock(&mu_);
  final_step_ = info->step();
  return absl::OkStatus();
}

void JobCheckpoints::MarkFinal(int64_t step) {
  feed_->MarkFinal(step);
  {
    absl::MutexLock lock(&mu_);
    final_step_ = step;
  }
  RefreshStatus();
}

absl::StatusOr<CheckpointInfo> JobCheckpoints::Take(GlobalStep& global_step,
                                                    const DataLeaseManager& data,
                                                    CheckpointKind kind) {
  const absl::Time start = clock_.Now();
  absl::StatusOr<CheckpointManifest> manifest =
      checkpointer()->Take(global_step.value(), data.Position(), kind);
  if (!manifest.ok()) {
    RecordFailure(global_step.value(), kind, manifest.status());
    return manifest.status();
  }
  const int64_t step = manifest->global_step();
  if (absl::StatusOr<int64_t> raised = global_step.RaiseTo(step); !raised.ok()) {
    return raised.status();
  }
  const absl::Time end = clock_.Now();
  CheckpointInfo info = CheckpointInfoFromManifest(CheckpointDir(model_dir_, step), *manifest);
  schedule()->RecordSaved(step, kind);
  {
    absl::MutexLock lock(&mu_);
    failures_.RecordSaved();
  }
  feed_->Add(info);
  if (metrics_ != nullptr) metrics_->RecordCheckpoint(end - start, info.bytes(), end);
  LOG(INFO) << "job " << job_id_ << ": saved " << info.path()
            << (kind == CheckpointKind::kFinal ? " (final)" : "") << ", " << info.bytes()
            << " bytes in " << absl::FormatDuration(end - start);
  RefreshStatus();
  JobEvent event;
  *event.mutable_checkpoint() = info;
  status_.Publish(std::move(event));
  return info;
}

void JobCheckpoints::RecordFailure(int64_t step, CheckpointKind kind, const absl::Status& error) {
  if (metrics_ != nullptr) metrics_->RecordCheckpointFailure();
  FailedCheckpoint failed;
  {
    absl::MutexLock lock(&mu_);
    failed = failures_.RecordFailed(step, kind, error);
  }
  LOG(ERROR) << "job " << job_id_ << ": checkpoint at step " << step << " failed ("
             << failed.consecutive << " in a row): " << error.message();
  status_.Update("the checkpoint failure", [&](JobStatus& status) {
    absl::MutexLock lock(&mu_);
    status.set_checkpoint_failures(failures_.total());
    status.set_last_checkpoint_failure(failures_.DescribeLast());
  });
  JobEvent event;
  CheckpointFailure* told = event.mutable_checkpoint_failure();
  told->set_step(failed.step);
  told->set_message(failed.message);
  told->set_consecutive_failures(failed.consecutive);
  told->set_max_consecutive_failures(failed.max_consecutive);
  told->set_final(failed.final);
  status_.Publish(std::move(event));
}

void JobCheckpoints::AnnounceExisting() {
  absl::StatusOr<std::vector<CheckpointRef>> existing = ListCheckpoints(env_, model_dir_);
  if (!existing.ok()) {
    LOG(WARNING) << "job " << job_id_ << ": cannot list " << model_dir_ << ": "
                 << existing.status();
    return;
  }
  for (const CheckpointRef& ref : *existing) {
    absl::StatusOr<CheckpointManifest> manifest = ReadManifest(env_, ref.path);
    if (!manifest.ok()) continue;  // damaged: FindStartPoint said why
    CheckpointInfo info = CheckpointInfoFromManifest(ref.path, *manifest);
    // An evaluator told "final" here would stop following the job, and the
    // real final checkpoint would wait for its evaluation forever.
    info.set_final(false);
    feed_->Add(info);
  }
  RefreshStatus();
  ApplyRetention();
}

void JobCheckpoints::AddOnlyCheckpoint(CheckpointInfo info) {
  info.set_final(true);
  const int64_t step = info.step();
  feed_->Add(std::move(info));
  {
    absl::MutexLock lock(&mu_);
    final_step_ = step;
  }
  RefreshStatus();
}

void JobCheckpoints::LookForNew() {
  absl::StatusOr<std::vector<CheckpointRef>> existing = ListCheckpoints(env_, model_dir_);
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
    absl::StatusOr<CheckpointManifest> manifest = ReadManifest(env_, ref.path);
    if (!manifest.ok()) {
      LOG(WARNING) << "job " << job_id_ << ": skipping " << ref.path << ": "
                   << manifest.status().message();
      continue;
    }
    feed_->Add(CheckpointInfoFromManifest(ref.path, *manifest));
    added = true;
  }
  if (added) RefreshStatus();
}

std::optional<int64_t> JobCheckpoints::final_step() const {
  absl::MutexLock lock(&mu_);
  return final_step_;
}

bool JobCheckpoints::IsFinal(int64_t step) const {
  for (const CheckpointInfo& info : feed_->List()) {
    if (info.step() == step) return info.final();
  }
  return false;
}

void JobCheckpoints::ApplyRetention() {
  JobCheckpointer* const checkpointer = this->checkpointer();
  if (checkpointer == nullptr) return;
  std::vector<int64_t> steps;
  for (const CheckpointInfo& info : feed_->List()) steps.push_back(info.step());
  const std::vector<int64_t> doomed = retention_->ToDelete(steps);
  if (doomed.empty()) return;
  for (int64_t step : doomed) {
    absl::Status deleted = checkpointer->Delete(step);
    if (!deleted.ok() && !absl::IsNotFound(deleted)) {
      LOG(WARNING) << "job " << job_id_ << ": max_to_keep: " << deleted;
      continue;
    }
    feed_->Remove(step);
    const bool unseen = evaluations_.Forget(step) && JobModeEvaluates(spec_.mode());
    // Checkpoints come faster than the evaluator takes them up (it may
    // still be loading its data): say what became of this one.
    if (unseen) {
      status_.PublishSkippedEvaluation(
          step, "removed by checkpoint.max_to_keep before the evaluator took it up");
    }
  }
  RefreshStatus();
}

void JobCheckpoints::RefreshStatus() {
  std::vector<CheckpointInfo> checkpoints = feed_->List();
  const std::map<int64_t, EvaluationLedger::Metrics> metrics = evaluations_.AllMetrics();
  status_.Update("the checkpoints", [&](JobStatus& status) {
    status.clear_checkpoints();
    for (CheckpointInfo& info : checkpoints) {
      auto it = metrics.find(info.step());
      if (it != metrics.end()) info.mutable_metrics()->insert(it->second.begin(), it->second.end());
      *status.add_checkpoints() = std::move(info);
    }
  });
}

std::string JobCheckpoints::ResumeHint() const {
  if (!trains_) return "";
  std::vector<CheckpointInfo> checkpoints = feed_->List();
  if (checkpoints.empty()) return "; no checkpoint was saved";
  return absl::StrCat("; submit the job again with the same checkpoint.model_dir to resume from ",
                      CheckpointDirName(checkpoints.back().step()));
}

void JobCheckpoints::Close() { feed_->Close(); }

}  // namespace coordinator
}  // namespace pstrain
