#ifndef PSTRAIN_COMMON_EXPORT_ONNX_EXPORT_H_
#define PSTRAIN_COMMON_EXPORT_ONNX_EXPORT_H_

// The ONNX part of an export: model.onnx, the model's own description of
// its prediction (Model::DescribeOnnx) over its trained weights, and
// model.onnx.data beside it when the weights are too large for one
// protobuf (ONNX external data; ONNX Runtime reads it from beside the
// model file).
//
// Inputs (dynamic batch; each model reads the ones its features need):
//   dense          float32 [batch, width]: dense features (images flattened
//                  in height-width-channel order)
//   sparse_ids     int64 [batch, n]: sparse feature ids, padded per batch
//   sparse_values  float32 [batch, n]: their values; 0 in padding
// Outputs:
//   predictions    float32 [batch, width]: what pstrain predict gives
//   logits         float32 [batch, width]: classifiers' scores before the
//                  softmax or sigmoid

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/export/export_manifest.pb.h"
#include "common/export/model_parameters.h"
#include "common/export/onnx_model_builder.h"
#include "common/model/model.h"

namespace pstrain {

struct OnnxExportOptions {
  // Weight bytes model.onnx holds at most; the largest weights beyond go
  // to model.onnx.data. 1 GiB leaves room under protobuf's 2 GB for the
  // graph itself and the id maps of dynamic tables.
  int64_t max_inline_bytes = int64_t{1} << 30;
};

struct OnnxExportResult {
  // Unset when no ONNX file was written; `omitted` then says why.
  std::optional<ExportedFile> model;
  std::optional<ExportedFile> data;
  std::string omitted;
};

// Writes model.onnx (and model.onnx.data) of `model` with `parameters` into
// the folder `dir`, each file synced. A model without an ONNX description
// (DescribeOnnx fails, as by default) or whose graph cannot be written
// (OnnxModelBuilder::Finish fails) writes nothing and returns the reason
// in `omitted`.
// Other codes: from the Env; a file may then be left half-written in
// `dir`, which the caller discards (WriteExport removes the whole
// unfinished export).
absl::StatusOr<OnnxExportResult> WriteOnnxExport(Env& env, const std::string& dir,
                                                 const Model& model,
                                                 const ModelParameters& parameters,
                                                 const OnnxModelInfo& info,
                                                 const OnnxExportOptions& options);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_ONNX_EXPORT_H_
