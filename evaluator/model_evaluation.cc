#include "evaluator/model_evaluation.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_mode.h"
#include "common/data/batch_reader.h"
#include "common/data/data_source.h"
#include "common/evaluation/eval_metrics.h"
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
  EvalMetricsOptions metrics_options;
  metrics_options.metrics.assign(spec_.eval().metrics().begin(), spec_.eval().metrics().end());
  if (metrics_options.metrics.empty()) metrics_options.metrics = {"loss"};
  if (spec_.eval().top_k() > 0) metrics_options.top_k = spec_.eval().top_k();
  metrics_options.kind = model_->prediction_kind();
  metrics_options.width = model_->prediction_width();
  ASSIGN_OR_RETURN(EvalMetrics metrics, EvalMetrics::Create(metrics_options));

  BatchReaderOptions reader_options = BatchReaderOptionsFromSpec(spec_.eval_data(), true);
  reader_options.epochs = 1;
  ASSIGN_OR_RETURN(std::unique_ptr<BatchReader> reader,
                   BatchReader::Create(eval_source_.get(), reader_options));
  EvaluationResult result;
  ParameterView view;
  ModelOutput output;
  for (int64_t step = 0; spec_.eval().steps() == 0 || step < spec_.eval().steps(); ++step) {
    absl::StatusOr<ExampleBatch> batch = reader->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    if (!batch.ok()) return batch.status();
    ASSIGN_OR_RETURN(RowIds rows, model_->RowsToRead(*batch));
    RETURN_IF_ERROR(parameters.PrepareView(rows, &view));
    RETURN_IF_ERROR(model_->Forward(view, *batch, ModelMode::kEval, &output));
    RETURN_IF_ERROR(metrics.Add(output.predictions, batch->labels, output.example_losses));
    result.examples += batch->size;
    ++result.batches;
    reader->Recycle(*std::move(batch));
  }
  result.metrics = metrics.Results();
  return result;
}

}  // namespace evaluator
}  // namespace pstrain
