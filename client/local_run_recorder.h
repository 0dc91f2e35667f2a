#ifndef PSTRAIN_CLIENT_LOCAL_RUN_RECORDER_H_
#define PSTRAIN_CLIENT_LOCAL_RUN_RECORDER_H_

// What `pstrain train-local --model_dir` leaves, in the layout a cluster
// job leaves, so `pstrain report`, `export`, `predict` and ONNX Runtime take
// a single-process run's result as they take a cluster's:
//
//   model_dir/train/   loss, learning_rate, examples_per_sec (event files
//                      and scalars.jsonl) at every progress report
//   model_dir/eval/    every final evaluation metric, at the final step
//   model_dir/ckpt-<step>/   checkpoints every checkpoint.every_steps or
//                      every_seconds and at the end, one shard holding every
//                      variable and its slots; checkpoint.max_to_keep kept
//   <export_dir>/best/<step>/, final/<step>/   as export.strategy says (the
//                      final evaluation is the only one, so the best)
//
// It does not resume: a model_dir that already holds a checkpoint is
// refused. Not thread-safe; call it on the trainer's compute thread.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "common/summary/file_summary_writer.h"
#include "common/training/local_trainer.h"
#include "protos/job.pb.h"

namespace pstrain {

// What Finish wrote.
struct RecordedRun {
  std::string checkpoint_dir;  // the final checkpoint
  std::vector<std::string> export_dirs;
};

class LocalRunRecorder {
 public:
  // `spec` as PrepareJobSpec returns it; its model_dir is where to write.
  // FailedPrecondition: model_dir already holds a checkpoint. The Env's
  // errors creating the summary folders.
  static absl::StatusOr<std::unique_ptr<LocalRunRecorder>> Open(Env& env, const JobSpec& spec);

  // Records one progress report, and checkpoints `trainer` when the spec's
  // interval has passed.
  absl::Status OnProgress(const TrainingProgress& progress, const LocalTrainer& trainer);

  // Records the final evaluation, writes the final checkpoint and the
  // exports. Call once, after training ended normally.
  absl::StatusOr<RecordedRun> Finish(const LocalTrainer& trainer,
                                     const LocalTrainingResult& result);

 private:
  LocalRunRecorder(Env& env, JobSpec spec, std::unique_ptr<FileSummaryWriter> train,
                   std::unique_ptr<FileSummaryWriter> eval);
  absl::StatusOr<std::string> WriteCheckpoint(const LocalTrainer& trainer, bool final);
  absl::Status RemoveOldCheckpoints();

  Env& env_;
  const JobSpec spec_;
  std::unique_ptr<FileSummaryWriter> train_summaries_;
  std::unique_ptr<FileSummaryWriter> eval_summaries_;
  int64_t last_checkpoint_step_ = 0;
  absl::Time last_checkpoint_time_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_LOCAL_RUN_RECORDER_H_
