#include "client/local_run_recorder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "client/export/checkpoint_export.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_writer.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/shard_file.h"
#include "common/export/export_versions.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<LocalRunRecorder>> LocalRunRecorder::Open(Env& env,
                                                                         const JobSpec& spec) {
  const std::string& model_dir = spec.checkpoint().model_dir();
  ASSIGN_OR_RETURN(const std::vector<CheckpointRef> existing, ListCheckpoints(env, model_dir));
  if (!existing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        model_dir, " already holds checkpoints (the newest of step ", existing.back().step,
        "); train-local starts from scratch and does not resume: give a new --model_dir or "
        "remove that one"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<FileSummaryWriter> train,
                   FileSummaryWriter::Open(&env, TrainSummaryDir(model_dir)));
  ASSIGN_OR_RETURN(std::unique_ptr<FileSummaryWriter> eval,
                   FileSummaryWriter::Open(&env, EvalSummaryDir(model_dir)));
  return std::unique_ptr<LocalRunRecorder>(
      new LocalRunRecorder(env, spec, std::move(train), std::move(eval)));
}

LocalRunRecorder::LocalRunRecorder(Env& env, JobSpec spec, std::unique_ptr<FileSummaryWriter> train,
                                   std::unique_ptr<FileSummaryWriter> eval)
    : env_(env),
      spec_(std::move(spec)),
      train_summaries_(std::move(train)),
      eval_summaries_(std::move(eval)),
      last_checkpoint_time_(env.Now()) {}

absl::Status LocalRunRecorder::OnProgress(const TrainingProgress& progress,
                                          const LocalTrainer& trainer) {
  absl::Status written = train_summaries_->WriteScalar(progress.global_step, "loss", progress.loss);
  written.Update(
      train_summaries_->WriteScalar(progress.global_step, "learning_rate", progress.learning_rate));
  written.Update(train_summaries_->WriteScalar(progress.global_step, "examples_per_sec",
                                               progress.examples_per_sec));
  RETURN_IF_ERROR(written);
  const CheckpointSpec& every = spec_.checkpoint();
  const bool steps_due = every.every_steps() > 0 &&
                         progress.global_step - last_checkpoint_step_ >= every.every_steps();
  const bool time_due = every.every_seconds() > 0 &&
                        env_.Now() - last_checkpoint_time_ >= absl::Seconds(every.every_seconds());
  if (steps_due || time_due) RETURN_IF_ERROR(WriteCheckpoint(trainer, /*final=*/false).status());
  return absl::OkStatus();
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
  RETURN_IF_ERROR(train_summaries_->Close());

  RecordedRun run;
  if (last_checkpoint_step_ == step) {
    // The periodic checkpoint of this very step holds the final variables;
    // the final one replaces it.
    RETURN_IF_ERROR(DeleteCheckpoint(env_, CheckpointDir(spec_.checkpoint().model_dir(), step)));
  }
  ASSIGN_OR_RETURN(run.checkpoint_dir, WriteCheckpoint(trainer, /*final=*/true));

  const ExportSpec& exports = spec_.export_();
  std::vector<std::string> parents;
  if (exports.strategy() == EXPORT_STRATEGY_BEST) parents.push_back("best");
  if (exports.strategy() == EXPORT_STRATEGY_BEST || exports.strategy() == EXPORT_STRATEGY_FINAL) {
    parents.push_back("final");
  }
  for (const std::string& parent : parents) {
    const std::string dir = ExportVersionDir(JoinPath(exports.export_dir(), parent), step);
    ASSIGN_OR_RETURN(const CheckpointExport exported,
                     ExportCheckpoint(env_, spec_.checkpoint().model_dir(), step, dir));
    run.export_dirs.push_back(exported.export_dir);
  }
  return run;
}

absl::StatusOr<std::string> LocalRunRecorder::WriteCheckpoint(const LocalTrainer& trainer,
                                                              bool final) {
  const std::string& model_dir = spec_.checkpoint().model_dir();
  const int64_t step = trainer.global_step();
  ASSIGN_OR_RETURN(const PendingCheckpoint pending, BeginCheckpoint(env_, model_dir, step));
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
    manifest.set_final(final);
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
  last_checkpoint_step_ = step;
  last_checkpoint_time_ = env_.Now();
  RETURN_IF_ERROR(RemoveOldCheckpoints());
  return pending.final_dir;
}

absl::Status LocalRunRecorder::RemoveOldCheckpoints() {
  const int keep = spec_.checkpoint().max_to_keep();
  if (keep <= 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::vector<CheckpointRef> checkpoints,
                   ListCheckpoints(env_, spec_.checkpoint().model_dir()));
  for (size_t i = 0; i + keep < checkpoints.size(); ++i) {
    RETURN_IF_ERROR(DeleteCheckpoint(env_, checkpoints[i].path));
  }
  return absl::OkStatus();
}

}  // namespace pstrain
