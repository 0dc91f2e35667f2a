#ifndef PSTRAIN_COMMON_EXPORT_EXPORT_WRITER_H_
#define PSTRAIN_COMMON_EXPORT_EXPORT_WRITER_H_

// Writing an exported model: a self-contained folder (layout in
// common/export/export_manifest.h) that LoadExportedModel
// (common/export/exported_model.h) turns back into a model ready to predict,
// in any process, without the training data, the checkpoint or the
// parameter servers.

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/data/dataset_info.h"
#include "common/export/export_manifest.pb.h"
#include "common/export/model_parameters.h"
#include "common/export/onnx_export.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

// What an export records beside the weights.
struct ExportSource {
  // With every default filled in (PrepareJobSpec); its model spec rebuilds
  // the model.
  JobSpec spec;
  // What the model was sized from (dimensions the spec leaves at 0).
  DatasetInfo dataset;
  int64_t global_step = 0;
  std::string job_id;
  // The checkpoint's evaluation metrics; may be empty.
  std::map<std::string, double> metrics;
  // The checkpoint folder the weights came from; for people.
  std::string source_checkpoint;
};

// Writes `parameters` and `source` as an export at `dir`, with model.onnx
// described by `model` (the model the parameters belong to; see
// common/export/onnx_export.h; a model without an ONNX description is
// exported without it, the MANIFEST's onnx_omitted saying why, and a
// warning logged). The export appears whole or not at all: everything goes to <dir>.tmp (a stale
// one left by a crash is removed first), each file fsync'd, the MANIFEST last; then the folder is
// renamed to `dir` and its parent fsync'd. The parent of `dir` is created when missing. Returns the
// MANIFEST as written. AlreadyExists: `dir` exists (an export is never overwritten in place).
// InvalidArgument: an empty dir, a negative step.
// Other codes: from the Env (see common/checkpoint/env.h); the temporary
//   folder is removed then.
absl::StatusOr<ExportManifest> WriteExport(Env& env, const std::string& dir,
                                           const ExportSource& source, const Model& model,
                                           const ModelParameters& parameters,
                                           const OnnxExportOptions& onnx = {});

// ExportedDatasetInfo <-> DatasetInfo (num_examples is not kept).
ExportedDatasetInfo ToExportedDatasetInfo(const DatasetInfo& info);
DatasetInfo FromExportedDatasetInfo(const ExportedDatasetInfo& info);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_EXPORT_WRITER_H_
