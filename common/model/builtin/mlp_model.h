#ifndef PSTRAIN_COMMON_MODEL_BUILTIN_MLP_MODEL_H_
#define PSTRAIN_COMMON_MODEL_BUILTIN_MLP_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/model/internal/dense_stack.h"
#include "common/model/internal/loss_head.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

// A multi-layer perceptron over dense features: hidden layers (inner
// product, activation, optional dropout) and a softmax output over classes,
// or one value trained with mean squared error (spec.regression).
// Variables: hidden_<i>/{weights, bias}, logits/{weights, bias}.
class MlpModel : public Model {
 public:
  // `spec` filled (FillModelDefaults), with input_dim and num_classes
  // resolved, and valid (ValidateModelSpec): CreateModel does all three.
  // InvalidArgument: an activation this build does not know.
  static absl::StatusOr<std::unique_ptr<MlpModel>> Create(const MlpSpec& spec,
                                                          const ModelContext& context);

  std::string name() const override { return "mlp"; }
  std::vector<VariableDef> Variables() const override { return stack_.Variables(); }
  PredictionKind prediction_kind() const override { return kind_; }
  int64_t prediction_width() const override { return head_.width(); }

  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override;
  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override;
  absl::Status DescribeOnnx(OnnxGraph& graph) const override;

  double ForwardFlops(int64_t batch) const { return stack_.ForwardFlops(batch); }

 private:
  MlpModel(const model_internal::DenseStackConfig& config, PredictionKind kind,
           const ModelContext& context);

  const PredictionKind kind_;
  model_internal::DenseStack stack_;
  model_internal::LossHead head_;
  std::vector<float> dlogits_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_BUILTIN_MLP_MODEL_H_
