#ifndef PSTRAIN_CLIENT_EXPORT_CHECKPOINT_EXPORT_H_
#define PSTRAIN_CLIENT_EXPORT_CHECKPOINT_EXPORT_H_

// Exporting one checkpoint of a model_dir by hand (`pstrain export`): the
// same self-contained folder the evaluator writes for its best and final
// models (common/export/export_writer.h), from any checkpoint, at any time,
// without a cluster. Thread-compatible; compute runs on the calling thread.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/env.h"
#include "common/export/export_manifest.pb.h"
#include "protos/job.pb.h"

namespace pstrain {

// Picks the checkpoint of `model_dir` to export and checks every byte of
// it: the one of `step` when given, else the newest that verifies (newer
// damaged ones are passed over and listed in *skipped when it is not null).
// NotFound: `model_dir` does not exist, holds no complete checkpoint, or
//   none of `step` (the message lists the steps it has).
// DataLoss: the checkpoint of `step` is damaged (the message names the
//   file). FailedPrecondition: a MANIFEST of a newer format.
absl::StatusOr<VerifiedCheckpoint> SelectCheckpoint(Env& env, const std::string& model_dir,
                                                    std::optional<int64_t> step,
                                                    std::vector<SkippedCheckpoint>* skipped);

// The evaluation metrics the job's evaluator recorded for `step` in
// model_dir/eval/scalars.jsonl; empty when it recorded none (or the file
// cannot be read: the metrics only annotate an export).
std::map<std::string, double> RecordedEvalMetrics(Env& env, const std::string& model_dir,
                                                  int64_t step);

struct CheckpointExport {
  int64_t step = 0;
  std::string checkpoint_dir;
  std::string export_dir;
  ExportManifest manifest;  // as written
  // Newer checkpoints passed over as damaged (newest first).
  std::vector<SkippedCheckpoint> skipped;
};

// Exports a checkpoint of `model_dir` (SelectCheckpoint) to `export_dir`,
// which must not exist yet: the spec its MANIFEST holds rebuilds the model,
// the shards are put back together (common/export/checkpoint_loader.h), and
// WriteExport writes them with the checkpoint's recorded eval metrics.
// NotFound, DataLoss: as SelectCheckpoint, or a shard file missing or
//   damaged while it is read.
// AlreadyExists: `export_dir` exists.
// FailedPrecondition: the MANIFEST holds no job spec, the data the model
//   is sized from cannot be read (ModelSizingInfo), or the checkpoint does
//   not fit the model its spec builds.
// The errors of the model factory and of the Env.
absl::StatusOr<CheckpointExport> ExportCheckpoint(Env& env, const std::string& model_dir,
                                                  std::optional<int64_t> step,
                                                  const std::string& export_dir);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_EXPORT_CHECKPOINT_EXPORT_H_
