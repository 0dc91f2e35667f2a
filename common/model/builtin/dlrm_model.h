#ifndef PSTRAIN_COMMON_MODEL_BUILTIN_DLRM_MODEL_H_
#define PSTRAIN_COMMON_MODEL_BUILTIN_DLRM_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/model/internal/dense_stack.h"
#include "common/model/internal/loss_head.h"
#include "common/model/layers/activation_layer.h"
#include "common/model/layers/dot_interaction.h"
#include "common/model/layers/embedding_lookup.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

// DLRM (Naumov et al. 2019) for binary labels over D dense features and F
// categorical fields, one id each: the bottom MLP (ReLU after every layer)
// turns the dense features into a vector of the embedding dim d; field k's
// id picks a row of table k; the dot interaction of those F + 1 vectors
// (DotInteraction: the bottom output, then every pair's dot product) feeds
// the top MLP (ReLU between layers) to one logit, trained with sigmoid
// cross-entropy.
//
// Variables: dlrm/bottom/hidden_<i>/{weights, bias} (the last of them of
// width d), dlrm/embedding/field_<k> (embedding [vocabulary, d];
// vocabulary 0 is a dynamic table), dlrm/top/hidden_<i>/{weights, bias},
// dlrm/top/logits/{weights, bias}. Thread-compatible, as every Model.
class DlrmModel : public Model {
 public:
  // `spec` filled (FillModelDefaults), with num_fields > 0 and dense_dim > 0
  // resolved, and valid (ValidateModelSpec): CreateModel does all three.
  static absl::StatusOr<std::unique_ptr<DlrmModel>> Create(const DlrmSpec& spec,
                                                           const ModelContext& context);

  // The name of field k's table: "dlrm/embedding/field_<k>".
  static std::string TableName(int32_t field);

  std::string name() const override { return "dlrm"; }
  std::vector<VariableDef> Variables() const override;
  PredictionKind prediction_kind() const override { return PredictionKind::kBinaryProbability; }
  int64_t prediction_width() const override { return 1; }

  // Field k's unique ids for table k.
  absl::StatusOr<RowIds> RowsToRead(const ExampleBatch& batch) const override;
  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override;
  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override;
  absl::Status DescribeOnnx(OnnxGraph& graph) const override;

 private:
  DlrmModel(const DlrmSpec& spec, const ModelContext& context,
            const model_internal::DenseStackConfig& bottom,
            const model_internal::DenseStackConfig& top);
  // InvalidArgument: a batch without F ids per example or D dense
  // features, or an id outside a fixed table.
  absl::Status CheckBatch(const ExampleBatch& batch) const;
  // Field k's id of every example of a checked batch.
  void FieldIds(const ExampleBatch& batch, int32_t field, std::vector<int64_t>* ids) const;

  const DlrmSpec spec_;
  const uint64_t seed_;
  const int64_t dim_;
  const int32_t num_fields_;
  const int64_t dense_dim_;
  model_internal::DenseStack bottom_;
  ActivationLayer bottom_relu_;
  std::vector<EmbeddingLookup> lookups_;  // one per field
  const DotInteraction interaction_;
  model_internal::DenseStack top_;
  model_internal::LossHead head_;
  // Per batch: one bag per example (0, 1, ..., batch); a field's ids and
  // embeddings; the bottom output before and after its ReLU; the F + 1
  // vectors [batch, (F + 1) * d] and the interaction; the logits' and the
  // vectors' gradients and the slices of them each part reads.
  std::vector<int64_t> splits_, field_ids_;
  std::vector<float> field_rows_, bottom_out_, vectors_, interaction_out_;
  const float* bottom_pre_ = nullptr;  // the bottom stack's output, before the ReLU
  std::vector<float> dlogits_, d_interaction_, d_vectors_, d_bottom_, d_field_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_BUILTIN_DLRM_MODEL_H_
