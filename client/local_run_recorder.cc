#include "client/local_run_recorder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_writer.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/shard_file.h"
#include "common/config/job_spec_defaults.h"
#include "common/export/checkpoint_loader.h"
#include "common/optimizer/learning_rate.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<LocalRunRecorder>> LocalRunRecorder::Open(Env& env, Clock& clock,
                                                                         const JobSpec& spec,
                                                                         Warn warn) {
  const std::string& model_dir = spec.checkpoint().model_dir();
  ASSIGN_OR_RETURN(const std::vector<CheckpointRef> existing, ListCheckpoints(env, model_dir));
  if (!existing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        model_dir, " already holds checkpoints (the newest of step ", existing.back().step,
        "); train-local starts from scratch and does not resume: give a new --model_dir or "
        "remove that one"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<FileSummaryWriter> train_writer,
                   FileSummaryWriter::Open(&env, TrainSummaryDir(model_dir)));
  ASSIGN_OR_RETURN(LearningRate learning_rate, LearningRate::Create(spec.optimizer()));
  auto train = std::make_unique<TrainSummaries>(std::move(train_writer), std::move(learning_rate),
                                                StepsPerLoopOf(spec.training()), clock);
  ASSIGN_OR_RETURN(std::unique_ptr<FileSummaryWriter> eval,
                   FileSummaryWriter::Open(&env, EvalSummaryDir(model_dir)));
  ASSIGN_OR_RETURN(std::unique_ptr<ModelExporter> exporter, ModelExporter::Create(env, spec));
  return std::unique_ptr<LocalRunRecorder>(new LocalRunRecorder(
      env, clock, spec, std::move(warn), std::move(train), std::move(eval), std::move(exporter)));
}

LocalRunRecorder::LocalRunRecorder(Env& env, Clock& clock, JobSpec spec, Warn warn,
                                   std::unique_ptr<TrainSummaries> train,
                                   std::unique_ptr<FileSummaryWriter> eval,
                                   std::unique_ptr<ModelExporter> exporter)
    : env_(env),
      spec_(std::move(spec)),
      warn_(std::move(warn)),
      schedule_(spec_.checkpoint(), clock, /*start_step=*/0),
      failures_(MaxConsecutiveFailuresOf(spec_.checkpoint())),
      retention_(MaxToKeepOf(spec_.checkpoint())),
      train_summaries_(std::move(train)),
      eval_summaries_(std::move(eval)),
      exporter_(std::move(exporter)) {}

std::optional<std::string> LocalRunRecorder::OnProgress(const TrainingProgress& progress,
                                                        const LocalTrainer& trainer) {
  train_summaries_->OnProgress(progress.global_step, progress.loss, progress.examples_per_sec);
  if (schedule_.Due(progress.global_step) == CheckpointTrigger::kNone) return std::nullopt;
  const absl::StatusOr<CheckpointManifest> saved =
      WriteCheckpoint(trainer, CheckpointKind::kPeriodic);
  if (saved.ok()) return std::nullopt;
  schedule_.RecordFailed(progress.global_step);
  const FailedCheckpoint failed =
      failures_.RecordFailed(progress.global_step, CheckpointKind::kPeriodic, saved.status());
  std::optional<std::string> too_many = failures_.TooMany();
  warn_(absl::StrCat("could not save ", DescribeFailedCheckpoint(failed), "; ",
                     too_many.has_value() ? "the run fails"
                                          : "will try again " + schedule_.DescribeNextDue()));
  return too_many;
}

std::string LocalRunRecorder::LastSaved() const {
  const int64_t step = schedule_.last_saved_step();
  return step > 0 ? CheckpointDir(model_dir(), step) : "";
}

absl::StatusOr<RecordedRun> LocalRunRecorder::Finish(const LocalTrainer& trainer,
                                                     const LocalTrainingResult& result) {
  const int64_t step = result.global_step;
  // Before the checkpoint and the exports: an export carries the metrics
  // recorded for its step.
  for (const auto& [name, value] : result.eval_metrics) {
    RETURN_IF_ERROR(eval_summaries_->WriteScalar(step, name, value));
  }
  RETURN_IF_ERROR(eval_summaries_->Close());
  RETURN_IF_ERROR(train_summaries_->Close(step));

  absl::StatusOr<CheckpointManifest> manifest = schedule_.last_saved_step() == step
                                                    ? MarkFinal(step)
                                                    : WriteCheckpoint(trainer, CheckpointKind::kFinal);
  if (!manifest.ok()) {
    return absl::Status(manifest.status().code(),
                        absl::StrCat("the final checkpoint, ", CheckpointDirName(step),
                                     ", failed: ", manifest.status().message()));
  }
  RecordedRun run;
  run.checkpoint_dir = CheckpointDir(model_dir(), step);
  ASSIGN_OR_RETURN(run.export_dirs, Export(trainer, result, *manifest));
  return run;
}

absl::StatusOr<std::vector<std::string>> LocalRunRecorder::Export(
    const LocalTrainer& trainer, const LocalTrainingResult& result,
    const CheckpointManifest& manifest) {
  // The weights as the evaluator exports them: read back from the
  // checkpoint, every byte checked.
  const std::string checkpoint_dir = CheckpointDir(model_dir(), result.global_step);
  ASSIGN_OR_RETURN(std::unique_ptr<ModelParameters> parameters,
                   ModelParameters::Create(trainer.model().Variables(), spec_.training().seed()));
  RETURN_IF_ERROR(LoadCheckpointParameters(env_, checkpoint_dir, manifest, parameters.get()));
  ExportSource source;
  source.spec = spec_;
  source.dataset = trainer.train_info();
  source.global_step = result.global_step;
  source.job_id = spec_.name();
  source.metrics = result.eval_metrics;
  source.source_checkpoint = checkpoint_dir;
  ASSIGN_OR_RETURN(const ExportResult exported,
                   exporter_->Export(source, trainer.model(), *parameters, CheckpointKind::kFinal));
  std::vector<std::string> dirs;
  for (const std::string& dir : {exported.best_path, exported.final_path}) {
    if (!dir.empty()) dirs.push_back(dir);
  }
  return dirs;
}

absl::StatusOr<CheckpointManifest> LocalRunRecorder::MarkFinal(int64_t step) {
  const std::string dir = CheckpointDir(model_dir(), step);
  ASSIGN_OR_RETURN(CheckpointManifest manifest, ReadManifest(env_, dir));
  manifest.set_final(true);
  RETURN_IF_ERROR(WriteManifest(env_, dir, manifest));
  schedule_.RecordSaved(step, CheckpointKind::kFinal);
  return manifest;
}

absl::StatusOr<CheckpointManifest> LocalRunRecorder::WriteCheckpoint(const LocalTrainer& trainer,
                                                                     CheckpointKind kind) {
  const int64_t step = trainer.global_step();
  ASSIGN_OR_RETURN(const PendingCheckpoint pending, BeginCheckpoint(env_, model_dir(), step));
  absl::StatusOr<CheckpointManifest> committed = [&]() -> absl::StatusOr<CheckpointManifest> {
    ASSIGN_OR_RETURN(std::unique_ptr<ShardFileWriter> writer,
                     ShardFileWriter::Create(env_, pending.ShardPath(0, 1)));
    ShardFileHeader header;
    header.job_id = spec_.name();
    header.version = step;
    header.global_step = step;
    ASSIGN_OR_RETURN(const ShardFileInfo info,
                     trainer.variables().WriteCheckpointShard(header, *writer));
    CheckpointManifest manifest;
    manifest.set_job_id(spec_.name());
    manifest.set_global_step(step);
    manifest.set_final(kind == CheckpointKind::kFinal);
    *manifest.mutable_spec() = spec_;
    CheckpointShardFile* shard = manifest.add_shards();
    shard->set_name(ShardFileName(0, 1));
    shard->set_shard_index(0);
    shard->set_bytes(info.bytes);
    shard->set_crc32c(info.crc32c);
    return CommitCheckpoint(env_, pending, std::move(manifest));
  }();
  if (!committed.ok()) {
    if (absl::Status abandoned = AbandonCheckpoint(env_, pending); !abandoned.ok()) {
      LOG(WARNING) << "train-local: " << abandoned;
    }
    return committed.status();
  }
  schedule_.RecordSaved(step, kind);
  failures_.RecordSaved();
  ApplyRetention();
  return committed;
}

void LocalRunRecorder::ApplyRetention() {
  absl::StatusOr<std::vector<CheckpointRef>> checkpoints = ListCheckpoints(env_, model_dir());
  if (!checkpoints.ok()) {
    warn_(absl::StrCat("checkpoint.max_to_keep: ", checkpoints.status().message()));
    return;
  }
  std::vector<int64_t> steps;
  for (const CheckpointRef& checkpoint : *checkpoints) steps.push_back(checkpoint.step);
  for (int64_t step : retention_.ToDelete(steps)) {
    absl::Status deleted = DeleteCheckpoint(env_, CheckpointDir(model_dir(), step));
    if (!deleted.ok() && !absl::IsNotFound(deleted)) {
      warn_(absl::StrCat("checkpoint.max_to_keep: ", deleted.message()));
    }
  }
}

}  // namespace pstrain
