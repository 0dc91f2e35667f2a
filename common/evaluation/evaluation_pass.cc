#include "common/evaluation/evaluation_pass.h"

#include <memory>
#include <utility>

#include "common/data/batch_reader.h"
#include "common/data/data_source.h"
#include "common/evaluation/eval_metrics.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::StatusOr<EvaluationPassResult> RunEvaluationPass(const JobSpec& spec, Model& model,
                                                       const ExampleSource& source,
                                                       const PrepareParameterView& prepare_view) {
  EvalMetricsOptions metrics_options;
  metrics_options.metrics.assign(spec.eval().metrics().begin(), spec.eval().metrics().end());
  if (metrics_options.metrics.empty()) metrics_options.metrics = {"loss"};
  if (spec.eval().top_k() > 0) metrics_options.top_k = spec.eval().top_k();
  metrics_options.kind = model.prediction_kind();
  metrics_options.width = model.prediction_width();
  ASSIGN_OR_RETURN(EvalMetrics metrics, EvalMetrics::Create(metrics_options));

  BatchReaderOptions reader_options = BatchReaderOptionsFromSpec(spec.eval_data(), PassMode::kEval);
  reader_options.epochs = 1;
  ASSIGN_OR_RETURN(std::unique_ptr<BatchReader> reader,
                   BatchReader::Create(&source, reader_options));
  EvaluationPassResult result;
  ParameterView view;
  ModelOutput output;
  for (int64_t step = 0; spec.eval().steps() == 0 || step < spec.eval().steps(); ++step) {
    absl::StatusOr<ExampleBatch> batch = reader->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    if (!batch.ok()) return batch.status();
    ASSIGN_OR_RETURN(RowIds rows, model.RowsToRead(*batch));
    RETURN_IF_ERROR(prepare_view(rows, &view));
    RETURN_IF_ERROR(model.Forward(view, *batch, PassMode::kEval, &output));
    RETURN_IF_ERROR(metrics.Add(output.predictions, batch->labels, output.example_losses));
    result.examples += batch->size;
    ++result.batches;
    reader->Recycle(*std::move(batch));
  }
  result.metrics = metrics.Results();
  return result;
}

}  // namespace pstrain
