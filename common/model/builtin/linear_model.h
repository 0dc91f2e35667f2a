#ifndef PSTRAIN_COMMON_MODEL_BUILTIN_LINEAR_MODEL_H_
#define PSTRAIN_COMMON_MODEL_BUILTIN_LINEAR_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/model/internal/dense_stack.h"
#include "common/model/internal/loss_head.h"
#include "common/model/layers/embedding_lookup.h"
#include "common/model/model.h"

namespace pstrain {

struct LinearModelOptions {
  // kRegression: linear regression (mean squared error).
  // kBinaryProbability: logistic regression on 0/1 labels (one logit).
  // kClassProbabilities: multinomial logistic regression (num_classes logits).
  PredictionKind kind = PredictionKind::kRegression;
  int32_t num_classes = 2;  // kClassProbabilities only; >= 2
  // Features per example: the dense width, or with sparse_input, the number
  // of distinct feature ids. > 0.
  int64_t input_dim = 0;
  // Read the batch's sparse features (id:value pairs, e.g. libsvm or click
  // logs) instead of dense ones. The weights are then an embedding table
  // [input_dim, width] of which a step reads and updates only the rows of
  // the ids in its batch.
  bool sparse_input = false;
};

// y = x . w + b: linear regression and (binary or multinomial) logistic
// regression, over dense or sparse features. Variables: linear/weights
// ([input_dim, width], dense or an embedding table), linear/bias [width].
class LinearModel : public Model {
 public:
  // InvalidArgument: input_dim <= 0, or num_classes < 2 for classes.
  static absl::StatusOr<std::unique_ptr<LinearModel>> Create(const LinearModelOptions& options,
                                                             const ModelContext& context);

  std::string name() const override;
  std::vector<VariableDef> Variables() const override;
  PredictionKind prediction_kind() const override { return options_.kind; }
  int64_t prediction_width() const override { return head_.width(); }

  absl::StatusOr<RowIds> RowsToRead(const ExampleBatch& batch) const override;
  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override;
  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override;
  absl::Status DescribeOnnx(OnnxGraph& graph) const override;

 private:
  LinearModel(const LinearModelOptions& options, const ModelContext& context);

  // The sparse path: logits = sum over the example's ids of value * row + b.
  absl::Status SparseForward(const ParameterView& parameters, const ExampleBatch& batch);

  const LinearModelOptions options_;
  const uint64_t seed_;
  model_internal::LossHead head_;
  // Exactly one of the two is used.
  std::unique_ptr<model_internal::DenseStack> dense_;
  std::unique_ptr<EmbeddingLookup> lookup_;
  std::vector<float> logits_, dlogits_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_BUILTIN_LINEAR_MODEL_H_
