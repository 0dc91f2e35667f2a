#ifndef PSTRAIN_CLIENT_LOCAL_RUN_RECORDER_H_
#define PSTRAIN_CLIENT_LOCAL_RUN_RECORDER_H_

// What `pstrain train-local --model_dir` leaves, in the layout a cluster
// job leaves and by the same rules (common/job/), so `pstrain report`,
// `export`, `predict` and ONNX Runtime take a single-process run's result as
// they take a cluster's, and one spec keeps the same checkpoints and exports
// whoever trains it:
//
//   model_dir/train/   the coordinator's training scalars (TrainSummaries)
//   model_dir/eval/    every final evaluation metric, at the final step
//   model_dir/ckpt-<step>/   checkpoints when the CheckpointSchedule says
//                      and at the end, one shard holding every variable and
//                      its slots; the RetentionPolicy of
//                      checkpoint.max_to_keep deletes older ones
//   <export_dir>/best/<step>/, final/<step>/   as the ExportPolicy says for
//                      the final evaluation (best only when it beats the
//                      best export already there; exports_to_keep each)
//
// A periodic checkpoint that cannot be saved (a full disk, an I/O error)
// leaves nothing behind and is tried again when the schedule next says so;
// checkpoint.max_consecutive_failures of them in a row end the run, by the
// cluster's rule (CheckpointFailures). A final checkpoint that cannot be
// saved fails the run.
//
// It does not resume: a model_dir that already holds a checkpoint is
// refused. Not thread-safe; call it on the trainer's compute thread.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/clock/clock.h"
#include "common/job/checkpoint_failures.h"
#include "common/job/checkpoint_schedule.h"
#include "common/job/model_exporter.h"
#include "common/job/retention_policy.h"
#include "common/job/train_summaries.h"
#include "common/summary/file_summary_writer.h"
#include "common/training/local_trainer.h"
#include "protos/checkpoint.pb.h"
#include "protos/job.pb.h"

namespace pstrain {

// What Finish wrote.
struct RecordedRun {
  std::string checkpoint_dir;  // the final checkpoint
  std::vector<std::string> export_dirs;  // best/<step> first, when written
};

class LocalRunRecorder {
 public:
  // Told what went wrong that the run outlives, one line each: "could not
  // save ckpt-600 (1 in a row of at most 3): <error>; will try again at
  // step 800".
  using Warn = std::function<void(const std::string& line)>;

  // `spec` as PrepareJobSpec returns it; its model_dir is where to write.
  // `env` and `clock` outlive the recorder.
  // FailedPrecondition: model_dir already holds a checkpoint. The Env's
  // errors creating the summary folders or listing export_dir/best.
  static absl::StatusOr<std::unique_ptr<LocalRunRecorder>> Open(Env& env, Clock& clock,
                                                                const JobSpec& spec, Warn warn);

  // Records one progress report, and checkpoints `trainer` when the
  // schedule says so. Returns why the run must stop once checkpoints failed
  // too often in a row; nullopt otherwise.
  std::optional<std::string> OnProgress(const TrainingProgress& progress,
                                        const LocalTrainer& trainer);

  // The newest checkpoint saved, for a person to go on from when the run
  // failed; empty when none was.
  std::string LastSaved() const;

  // Records the final evaluation, writes the final checkpoint and the
  // exports. Call once, after training ended normally.
  absl::StatusOr<RecordedRun> Finish(const LocalTrainer& trainer,
                                     const LocalTrainingResult& result);

 private:
  LocalRunRecorder(Env& env, Clock& clock, JobSpec spec, Warn warn,
                   std::unique_ptr<TrainSummaries> train, std::unique_ptr<FileSummaryWriter> eval,
                   std::unique_ptr<ModelExporter> exporter);
  // Writes ckpt-<step> of the trainer's variables, then deletes the
  // checkpoints retention lets go. The MANIFEST written. On an error
  // nothing of it is left, and the checkpoints saved before stay.
  absl::StatusOr<CheckpointManifest> WriteCheckpoint(const LocalTrainer& trainer, CheckpointKind kind);
  // The periodic checkpoint at `step` holds the final variables: its
  // MANIFEST, rewritten atomically marked final, makes it the final one,
  // and a failure leaves it as it was. The MANIFEST written.
  absl::StatusOr<CheckpointManifest> MarkFinal(int64_t step);
  // Deletes what max_to_keep lets go; what it cannot delete is warned of
  // and tried again after the next checkpoint, as the coordinator does.
  void ApplyRetention();
  // Exports the final checkpoint as the policy says; the folders written.
  absl::StatusOr<std::vector<std::string>> Export(const LocalTrainer& trainer,
                                                  const LocalTrainingResult& result,
                                                  const CheckpointManifest& manifest);
  const std::string& model_dir() const { return spec_.checkpoint().model_dir(); }

  Env& env_;
  const JobSpec spec_;
  const Warn warn_;
  CheckpointSchedule schedule_;
  CheckpointFailures failures_;
  RetentionPolicy retention_;
  std::unique_ptr<TrainSummaries> train_summaries_;
  std::unique_ptr<FileSummaryWriter> eval_summaries_;
  std::unique_ptr<ModelExporter> exporter_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOCAL_RUN_RECORDER_H_
