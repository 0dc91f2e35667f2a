#include "evaluator/model_evaluation.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/data/data_source.h"
#include "common/evaluation/evaluation_pass.h"
#include "common/model/job_model.h"
#include "common/model/label_fit.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace evaluator {

absl::StatusOr<std::unique_ptr<ModelEvaluator>> ModelEvaluator::Create(const JobSpec& spec) {
  if (!spec.has_eval_data()) {
    return absl::FailedPreconditionError("the job has no eval_data to evaluate on");
  }
  std::unique_ptr<ModelEvaluator> evaluator(new ModelEvaluator(spec));
  ASSIGN_OR_RETURN(evaluator->eval_source_, OpenExampleSource(spec.eval_data(), PassMode::kEval));
  if (SizesFromTrainData(spec)) {
    // The training data is read only for its dimensions, and dropped.
    ASSIGN_OR_RETURN(evaluator->model_info_, ModelSizingInfo(spec));
  } else {
    evaluator->model_info_ = evaluator->eval_source_->info();
  }
  ASSIGN_OR_RETURN(JobModel model, CreateJobModel(spec, evaluator->model_info_));
  RETURN_IF_ERROR(CheckLabelsFit(*model.model, evaluator->eval_source_->info(), "eval_data"));
  evaluator->compute_ = std::move(model.compute);
  evaluator->model_ = std::move(model.model);
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
