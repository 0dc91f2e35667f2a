#ifndef PSTRAIN_EVALUATOR_MODEL_EVALUATION_H_
#define PSTRAIN_EVALUATOR_MODEL_EVALUATION_H_

// Evaluating a job's model with given parameters on the job's eval_data,
// with the single-process trainer's pass (common/evaluation/evaluation_pass.h),
// so the two agree exactly.

#include <memory>

#include "absl/status/statusor.h"
#include "common/data/dataset_info.h"
#include "common/data/example_source.h"
#include "common/evaluation/evaluation_pass.h"
#include "common/export/model_parameters.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {
namespace evaluator {

// What Evaluate measured: the metrics, examples and batches of one pass.
using EvaluationResult = EvaluationPassResult;

// One job's model, evaluation data and metrics. Compute runs on the thread
// that called Create (its oneDNN context is set up there): call Evaluate on
// that thread. Not thread-safe.
class ModelEvaluator {
 public:
  // `spec` with defaults filled. Sizes the model as the coordinator's
  // planner and the workers do: from the training data's dimensions when
  // the mode trains, from the evaluation data's otherwise; then keeps only
  // the evaluation data.
  // FailedPrecondition: the spec has no eval_data. The data readers' errors
  // (NotFound, InvalidArgument naming the file); the model factory's.
  static absl::StatusOr<std::unique_ptr<ModelEvaluator>> Create(const JobSpec& spec);

  ModelEvaluator(const ModelEvaluator&) = delete;
  ModelEvaluator& operator=(const ModelEvaluator&) = delete;

  // Runs eval.steps batches of eval_data (all of it when 0) through the
  // model with `parameters` and returns eval.metrics.
  // InvalidArgument: parameters that do not fit the model.
  absl::StatusOr<EvaluationResult> Evaluate(ModelParameters& parameters);

  // Empty parameters for this model (to load a checkpoint into).
  absl::StatusOr<std::unique_ptr<ModelParameters>> NewParameters() const;

  Model& model() { return *model_; }
  const JobSpec& spec() const { return spec_; }
  // What the model was sized from (kept in exports).
  const DatasetInfo& model_info() const { return model_info_; }

 private:
  explicit ModelEvaluator(const JobSpec& spec) : spec_(spec) {}

  const JobSpec spec_;
  DatasetInfo model_info_;
  std::unique_ptr<ComputeContext> compute_;
  std::unique_ptr<ExampleSource> eval_source_;
  std::unique_ptr<Model> model_;
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_MODEL_EVALUATION_H_
