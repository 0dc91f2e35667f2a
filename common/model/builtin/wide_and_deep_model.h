#ifndef PSTRAIN_COMMON_MODEL_BUILTIN_WIDE_AND_DEEP_MODEL_H_
#define PSTRAIN_COMMON_MODEL_BUILTIN_WIDE_AND_DEEP_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/model/internal/dense_stack.h"
#include "common/model/internal/loss_head.h"
#include "common/model/layers/embedding_lookup.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

// Wide-and-deep (Cheng et al. 2016) for binary labels over sparse ids: a
// wide linear part over the ids (with their values) plus a deep part, the
// ids' embeddings feeding an MLP; the two logits are summed.
//
// With num_fields F > 0 every example has exactly F ids, one per field, and
// the deep input is the F embeddings side by side [batch, F * dim]. With
// F = 0 examples have any number of ids, pooled into one embedding by the
// spec's combiner (sum or mean) [batch, dim]. With dense_dim D > 0 the
// example's D dense features follow the embeddings in the deep input
// [batch, F * dim + D], as DLRM-style click models take Criteo's counts;
// the wide part stays over the ids.
//
// Variables: wide/weights (embedding [vocabulary, 1]), wide/bias [1],
// deep/embedding (embedding [vocabulary, dim]), deep/hidden_<i>/{weights,
// bias}, deep/logits/{weights, bias}. vocabulary 0 is a dynamic table.
class WideAndDeepModel : public Model {
 public:
  // `spec` filled (FillModelDefaults), with num_fields (0 allowed:
  // variable-length ids) and dense_dim resolved, and valid
  // (ValidateModelSpec): CreateModel does all three. InvalidArgument: an
  // activation this build does not know.
  static absl::StatusOr<std::unique_ptr<WideAndDeepModel>> Create(const WideAndDeepSpec& spec,
                                                                  const ModelContext& context);

  std::string name() const override { return "wide_and_deep"; }
  std::vector<VariableDef> Variables() const override;
  PredictionKind prediction_kind() const override { return PredictionKind::kBinaryProbability; }
  int64_t prediction_width() const override { return 1; }

  absl::StatusOr<RowIds> RowsToRead(const ExampleBatch& batch) const override;
  absl::Status Forward(const ParameterView& parameters, const ExampleBatch& batch, PassMode mode,
                       ModelOutput* output) override;
  absl::Status ComputeGradients(const ParameterView& parameters, const ExampleBatch& batch,
                                ModelOutput* output, Gradients* gradients) override;
  absl::Status DescribeOnnx(OnnxGraph& graph) const override;

 private:
  WideAndDeepModel(const WideAndDeepSpec& spec, const ModelContext& context, int64_t dim,
                   const model_internal::DenseStackConfig& deep);
  absl::Status CheckBatch(const ExampleBatch& batch) const;

  const WideAndDeepSpec spec_;
  const uint64_t seed_;
  const int64_t dim_;
  const int32_t num_fields_;
  const int64_t dense_dim_;
  // The embeddings' part of a deep input row: dim * max(1, num_fields).
  const int64_t embedded_width_;
  EmbeddingLookup wide_lookup_;
  EmbeddingLookup deep_lookup_;
  model_internal::DenseStack deep_;
  model_internal::LossHead head_;
  // Per batch: the deep bags (one per example and field, or per example),
  // the looked-up embeddings and the deep input (the same with no dense
  // features), the wide and deep logits and their sum, and gradient buffers.
  std::vector<int64_t> deep_splits_;
  std::vector<float> embedded_, deep_input_, wide_logits_, logits_, dlogits_, d_deep_input_,
      d_embedded_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_BUILTIN_WIDE_AND_DEEP_MODEL_H_
