#include "evaluator/model_evaluation.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_mode.h"
#include "common/data/data_source.h"
#include "common/evaluation/evaluation_pass.h"
#include "common/model/model_factory.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace evaluator {

absl::StatusOr<std::unique_ptr<ModelEvaluator>> ModelEvaluator::Create(const JobSpec& spec) {
  if (!spec.has_eval_data()) {
    return absl::FailedPreconditionError("the job has no eval_data to evaluate on");
  }
  std::unique_ptr<ModelEvaluator> evaluator(new ModelEvaluator(spec));
  ComputeOptions compute;
  if (spec.training().compute_threads() > 0) {
    compute.num_threads = spec.training().compute_threads();
  }
  ASSIGN_OR_RETURN(evaluator->compute_, ComputeContext::Create(compute));
  ASSIGN_OR_RETURN(evaluator->eval_source_, OpenExampleSource(spec.eval_data(), true));
  if (JobModeTrains(spec.mode()) && spec.has_train_data()) {
    // Opened only for its dimensions, and dropped at once.
    ASSIGN_OR_RETURN(std::unique_ptr<ExampleSource> train,
                     OpenExampleSource(spec.train_data(), false));
    evaluator->model_info_ = train->info();
  } else {
    evaluator->model_info_ = evaluator->eval_source_->info();
  }
  ModelContext context;
  context.compute = evaluator->compute_.get();
  context.seed = spec.training().seed();
  ASSIGN_OR_RETURN(evaluator->model_, CreateModel(spec.model(), evaluator->model_info_, context));
  LOG(INFO) << "evaluator: " << evaluator->model_->name() << " sized from "
            << evaluator->model_info_.DebugString() << ", evaluating on "
            << evaluator->eval_source_->info().DebugString();
  return evaluator;
}

absl::StatusOr<std::unique_ptr<ModelParameters>> ModelEvaluator::NewParameters() const {
  return ModelParameters::Create(model_->Variables(), spec_.training().seed());
}

absl::StatusOr<EvaluationResult> ModelEvaluator::Evaluate(ModelParameters& parameters) {
  return RunEvaluationPass(spec_, *model_, *eval_source_,
                           [&parameters](const RowIds& rows, ParameterView* view) {
                             return parameters.PrepareView(rows, view);
                           });
}

}  // namespace evaluator
}  // namespace pstrain
