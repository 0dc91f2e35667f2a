#ifndef PSTRAIN_COMMON_MODEL_ONNX_ONNX_MODEL_H_
#define PSTRAIN_COMMON_MODEL_ONNX_ONNX_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/data/dataset_info.h"
#include "common/model/internal/loss_head.h"
#include "common/model/model.h"
#include "common/model/onnx/onnx_input_binding.h"
#include "common/model/onnx/onnx_program.h"
#include "protos/job.pb.h"

namespace pstrain {

// An imported ONNX graph (ModelSpec.onnx) as a model: OnnxProgram computes
// the output, which a loss head (softmax or sigmoid cross-entropy, mean
// squared error) turns into predictions and a loss.
//
// Variables: each float initializer, trainable, under its ONNX name,
// starting from the value the graph gives it (what PyTorch drew, or
// pretrained weights to fine-tune): whoever creates the variables reads
// them from the file (INITIALIZER_KIND_ONNX_TENSOR). Dense, but for the
// embedding tables of a graph over ids: a table's rows are ids [0, rows),
// or any 64-bit id for those the spec makes dynamic (their rows drawn from
// a normal distribution with the graph's table's mean and standard
// deviation), and a pass reads and updates those its batch names.
//
// The inputs: each takes a part of the batch (onnx_input_binding.h): the
// data's dense features, its sparse ids (all of an example's, or one
// field's), their weights, or their count.
class OnnxModel : public Model {
 public:
  // Loads spec.path (OnnxProgram::Load's errors). InvalidArgument: the
  // graph's inputs cannot be bound to the data (BindOnnxInputs: naming
  // the input and what does not fit), ids beyond a fixed table's rows, a
  // dynamic table the graph does not have, or the loss does not fit the
  // output (softmax needs 2 or more values per example, the others 1).
  static absl::StatusOr<std::unique_ptr<OnnxModel>> Create(const OnnxModelSpec& spec,
                                                           const DatasetInfo& info,
                                                           const ModelContext& context);

  std::string name() const override { return "onnx"; }
  std::vector<VariableDef> Variables() const override;
  PredictionKind prediction_kind() const override { return head_.kind(); }
  int64_t prediction_width() const override { return head_.width(); }
  absl::StatusOr<RowIds> RowsToRead(const ExampleBatch& batch) const override;

  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override;
  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override;
  // The imported graph again, with the trained weights and the loss head's
  // outputs: what the export writes as model.onnx.
  absl::Status DescribeOnnx(OnnxGraph& graph) const override;

 private:
  // The variables of the spec's dynamic tables, by initializer name.
  using DynamicTables = absl::flat_hash_map<std::string, VariableDef>;

  OnnxModel(std::string path, std::unique_ptr<OnnxProgram> program, DynamicTables dynamic,
            std::vector<OnnxInputBinding> bindings, PredictionKind kind,
            const ModelContext& context);
  // InvalidArgument unless each id of a fixed table has a row there.
  absl::Status CheckRows(const RowIds& rows) const;

  const std::string path_;  // of the graph, as the spec gives it
  // RowsToRead, const, fills inputs_ and runs the program's selections of
  // ids; the Forward after it does both again for the same batch.
  const std::unique_ptr<OnnxProgram> program_;
  const std::vector<OnnxInputBinding> bindings_;
  mutable OnnxBatchInputs inputs_;
  const DynamicTables dynamic_;  // by initializer name
  model_internal::LossHead head_;
  const uint64_t seed_;
  uint64_t passes_ = 0;  // seeds each training pass's dropout masks
  std::vector<float> d_output_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_ONNX_ONNX_MODEL_H_
