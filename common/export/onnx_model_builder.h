#ifndef PSTRAIN_COMMON_EXPORT_ONNX_MODEL_BUILDER_H_
#define PSTRAIN_COMMON_EXPORT_ONNX_MODEL_BUILDER_H_

// The OnnxGraph (common/model/onnx_graph.h) a model describes itself
// through when it is exported: it builds the ONNX model (opset 17 or the
// later one the description requires, with
// ai.onnx.ml 3 for dynamic tables' id maps) over the model's trained
// weights.
//
// Embedding tables become initializers read with Gather. A fixed table is
// written whole, [vocabulary, dim], the rows training never touched at their
// initial value. A dynamic table is written as the rows it stored plus one
// zero row last, [stored + 1, dim]; an ai.onnx.ml LabelEncoder maps each id
// to its row, and any other id to the zero row (an explicit default: the
// operator's own, -1, would make Gather read the last row by accident).

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/export/model_parameters.h"
#include "common/model/model.h"
#include "common/model/onnx_graph.h"
#include "onnx/onnx_pb.h"

namespace pstrain {

// What the ONNX model says about itself (doc string and metadata).
struct OnnxModelInfo {
  std::string model_name;
  PredictionKind prediction_kind = PredictionKind::kClassProbabilities;
  int64_t prediction_width = 0;
  int64_t global_step = 0;
  std::string job_id;
  // DatasetInfo's: the dense input's features by name (for its doc
  // string), and the value a NaN (missing) feature takes, NaN where none.
  std::vector<std::string> dense_names;
  std::vector<float> dense_fill;
  // The standardisation the model applies to its dense input, (x - mean) *
  // scale; empty for none. The graph applies it to what a caller feeds.
  std::vector<float> dense_mean;
  std::vector<float> dense_scale;
};

// One piece of model.onnx.data: `bytes` at `offset`.
struct OnnxExternalPiece {
  const char* data = nullptr;
  int64_t bytes = 0;
  int64_t offset = 0;
};

struct BuiltOnnxModel {
  onnx::ModelProto proto;
  // The contents of model.onnx.data at ascending offsets, zeros between;
  // empty when every weight is inside the proto. The pieces point into
  // the builder and the parameters, which must outlive them.
  std::vector<OnnxExternalPiece> external;
};

// Thread-compatible.
class OnnxModelBuilder final : public OnnxGraph {
 public:
  // `parameters` must outlive the builder and what Finish returns.
  explicit OnnxModelBuilder(const ModelParameters& parameters) : parameters_(parameters) {}

  OnnxModelBuilder(const OnnxModelBuilder&) = delete;
  OnnxModelBuilder& operator=(const OnnxModelBuilder&) = delete;

  // What the dense input's features are (OnnxModelInfo's dense_names and
  // dense_fill), before the model describes itself. A fill makes the graph
  // replace each NaN feature with its value first, so that a caller feeds
  // a missing value as NaN, as pstrain's reader fills it.
  // With a standardisation (`info`'s dense_mean and dense_scale), the
  // graph applies it after the fill, as the model applies it to what it
  // reads.
  void SetDenseFeatures(const OnnxModelInfo& info);

  std::string Input(const std::string& name, bool is_int64, const std::vector<int64_t>& dims,
                    const std::string& meaning) override;
  std::string DenseInput(int64_t width) override;
  OnnxSparseInput SparseInput(int64_t ids_per_example) override;
  std::string Variable(const std::string& name) override;
  std::string EmbeddingRows(const std::string& table, const std::string& ids) override;
  std::string FloatConstant(std::vector<int64_t> dims, std::vector<float> values) override;
  std::string Int64Constant(std::vector<int64_t> dims, std::vector<int64_t> values) override;
  std::string Node(const std::string& op, const std::vector<std::string>& inputs,
                   const std::vector<OnnxAttribute>& attributes) override;
  void Output(const std::string& name, const std::string& value, int64_t width,
              const std::string& meaning) override;
  void RequireOpset(int64_t opset) override;
  std::vector<std::string> NodeOutputs(const std::string& op,
                                       const std::vector<std::string>& inputs,
                                       const std::vector<OnnxAttribute>& attributes,
                                       int outputs) override;

  // The model described; call once. Weights beyond `max_inline_bytes` in all
  // go to model.onnx.data, largest first, each at a 4 KiB-aligned offset.
  // FailedPrecondition: the description's first error; no "predictions"
  // output of info.prediction_width; or a graph over protobuf's 2 GB even
  // with its weights outside (a dynamic table's id map is an attribute and
  // stays inside).
  absl::StatusOr<BuiltOnnxModel> Finish(const OnnxModelInfo& info, int64_t max_inline_bytes);

 private:
  // A weight or constant, written into the proto or model.onnx.data by
  // Finish.
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> dims;
    int32_t elem_type = 0;
    const char* data = nullptr;
    int64_t bytes = 0;
  };

  // Records the first error; later calls keep building a graph that
  // Finish refuses.
  void Fail(const std::string& message);
  // A fresh value name "<base>_<n>".
  std::string FreshName(const std::string& base);
  // Registers `name`; Fail when it is taken.
  bool Declare(const std::string& name);
  bool Known(const std::string& name, const std::string& reader);
  void AddInput(const std::string& name, int32_t elem_type, const std::string& second_dim,
                int64_t width, const std::string& doc);
  std::string AddTensor(const std::string& name, std::vector<int64_t> dims, int32_t elem_type,
                        const char* data, int64_t bytes);
  // Owned storage that stays in place while more is added.
  char* Own(int64_t bytes);
  // The initializer holding table `table` and, for a dynamic table, the
  // LabelEncoder's keys (its stored ids, in row order).
  struct TableTensor {
    std::string initializer;
    std::vector<int64_t> keys;
    bool dynamic = false;
  };
  const TableTensor* Table(const std::string& table);

  const ModelParameters& parameters_;
  onnx::GraphProto graph_;
  std::vector<PendingTensor> tensors_;
  std::deque<std::vector<char>> owned_;
  absl::flat_hash_set<std::string> values_;
  absl::flat_hash_map<std::string, std::string> variables_;
  absl::flat_hash_map<std::string, TableTensor> tables_;
  absl::flat_hash_map<std::string, std::string> lookups_;  // "table\nids" -> rows
  absl::flat_hash_map<std::string, int64_t> output_widths_;
  int64_t dense_width_ = -1;
  std::vector<std::string> dense_names_;
  std::vector<float> dense_fill_;
  std::vector<float> dense_mean_;
  std::vector<float> dense_scale_;
  // The dense input as the model reads it: "dense", or its filled copy.
  std::string dense_value_;
  int64_t sparse_width_ = -1;
  bool uses_ml_ = false;
  int64_t opset_ = 17;  // of the default domain, until RequireOpset raises it
  int64_t next_name_ = 0;
  absl::Status status_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EXPORT_ONNX_MODEL_BUILDER_H_
