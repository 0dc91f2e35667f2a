#ifndef PSTRAIN_COMMON_MODEL_STANDARDIZED_INPUT_MODEL_H_
#define PSTRAIN_COMMON_MODEL_STANDARDIZED_INPUT_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "common/data/example_batch.h"
#include "common/model/model.h"

namespace pstrain {

// A model that standardises the dense features it reads, (x - mean) *
// scale per feature, before `inner` sees them: the training data's
// standardisation (DatasetInfo::dense_mean, dense_scale) applied the same
// way by every role that builds the model from that data's info (workers,
// the evaluator on its own data, train-local, an export's predict). Its
// ONNX description is inner's: the export's builder puts the same
// standardisation in front of the dense input. Thread-compatible.
class StandardizedInputModel final : public Model {
 public:
  // `mean` and `scale` as wide as the features inner reads.
  StandardizedInputModel(std::unique_ptr<Model> inner, std::vector<float> mean,
                         std::vector<float> scale);

  std::string name() const override { return inner_->name(); }
  std::vector<VariableDef> Variables() const override { return inner_->Variables(); }
  PredictionKind prediction_kind() const override { return inner_->prediction_kind(); }
  int64_t prediction_width() const override { return inner_->prediction_width(); }
  absl::StatusOr<RowIds> RowsToRead(const ExampleBatch& batch) const override {
    return inner_->RowsToRead(batch);
  }
  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override;
  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override;
  absl::Status DescribeOnnx(OnnxGraph& graph) const override { return inner_->DescribeOnnx(graph); }

 private:
  // `batch` with its dense features standardised, in standardized_.
  // InvalidArgument: features of another width than mean_.
  absl::Status Standardize(const ExampleBatch& batch);

  const std::unique_ptr<Model> inner_;
  const std::vector<float> mean_;
  const std::vector<float> scale_;
  ExampleBatch standardized_;  // reused from batch to batch
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_STANDARDIZED_INPUT_MODEL_H_
