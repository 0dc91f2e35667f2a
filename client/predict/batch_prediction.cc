#include "client/predict/batch_prediction.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/evaluation/eval_metrics.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

ExamplePrediction Interpret(PredictionKind kind, absl::Span<const float> row) {
  ExamplePrediction prediction;
  switch (kind) {
    case PredictionKind::kClassProbabilities: {
      const auto best = std::max_element(row.begin(), row.end());
      prediction.predicted_class = best - row.begin();
      prediction.probability = *best;
      break;
    }
    case PredictionKind::kBinaryProbability:
      prediction.predicted_class = row[0] >= 0.5f ? 1 : 0;
      prediction.probability = row[0] >= 0.5f ? row[0] : 1 - row[0];
      break;
    case PredictionKind::kRegression:
      prediction.value = row[0];
      break;
  }
  return prediction;
}

}  // namespace

std::string FormatPredictionHeader(PredictionKind kind, bool has_labels) {
  return absl::StrCat(
      kind == PredictionKind::kRegression ? "index\tvalue" : "index\tclass\tprobability",
      has_labels ? "\tlabel" : "");
}

std::string FormatPrediction(const ExamplePrediction& prediction) {
  std::string line = prediction.predicted_class < 0
                         ? absl::StrFormat("%d\t%.6g", prediction.index, prediction.value)
                         : absl::StrFormat("%d\t%d\t%.4f", prediction.index,
                                           prediction.predicted_class, prediction.probability);
  if (prediction.has_label) absl::StrAppendFormat(&line, "\t%g", prediction.label);
  return line;
}

std::string FormatSummary(const PredictionSummary& summary) {
  std::string text = absl::StrCat(summary.examples, " examples");
  if (summary.has_labels) {
    std::vector<std::string> parts;
    for (const char* name : {"accuracy", "loss", "mse"}) {
      auto found = summary.metrics.find(name);
      if (found != summary.metrics.end()) {
        parts.push_back(absl::StrFormat("%s %.4f", name, found->second));
      }
    }
    return absl::StrCat(text, ": ", absl::StrJoin(parts, ", "));
  }
  if (summary.predicted_classes.empty()) {
    return absl::StrFormat("%s: mean predicted value %.6g", text, summary.mean_value);
  }
  return absl::StrCat(text, "; predicted classes (class:count): ",
                      absl::StrJoin(summary.predicted_classes, " ", absl::PairFormatter(":")));
}

absl::StatusOr<PredictionSummary> PredictAll(
    ExportedModel& model, const ExampleSource& source, bool has_labels, int64_t batch_size,
    const std::function<void(const ExamplePrediction&)>& each) {
  if (batch_size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("batch size must be > 0, got ", batch_size));
  }
  const PredictionKind kind = model.prediction_kind();
  const int64_t width = model.prediction_width();
  EvalMetricsOptions metrics_options;
  metrics_options.kind = kind;
  metrics_options.width = width;
  metrics_options.metrics = kind == PredictionKind::kRegression
                                ? std::vector<std::string>{"loss", "mse"}
                                : std::vector<std::string>{"loss", "accuracy"};
  ASSIGN_OR_RETURN(EvalMetrics metrics, EvalMetrics::Create(metrics_options));

  PredictionSummary summary;
  summary.has_labels = has_labels;
  double value_sum = 0;
  ExampleBatch batch;
  ParameterView view;
  ModelOutput output;
  std::vector<int64_t> indices;
  for (int64_t begin = 0; begin < source.num_examples(); begin += batch_size) {
    const int64_t end = std::min(source.num_examples(), begin + batch_size);
    indices.resize(end - begin);
    std::iota(indices.begin(), indices.end(), begin);
    RETURN_IF_ERROR(source.Fill(indices, &batch));
    const std::vector<float>* predictions = nullptr;
    std::vector<float> unlabelled;
    if (has_labels) {
      // The model's own loss head gives the per-example losses, as in
      // evaluation; Predict would drop them.
      ASSIGN_OR_RETURN(RowIds rows, model.model().RowsToRead(batch));
      RETURN_IF_ERROR(model.parameters().PrepareView(rows, &view));
      RETURN_IF_ERROR(model.model().Forward(view, batch, PassMode::kEval, &output));
      absl::Status added = metrics.Add(output.predictions, batch.labels, output.example_losses);
      if (!added.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("examples ", begin, " to ", end - 1, ": ", added.message()));
      }
      predictions = &output.predictions;
    } else {
      batch.labels.clear();
      ASSIGN_OR_RETURN(unlabelled, model.Predict(batch));
      predictions = &unlabelled;
    }
    for (int64_t i = 0; i < end - begin; ++i) {
      ExamplePrediction prediction =
          Interpret(kind, absl::MakeConstSpan(predictions->data() + i * width, width));
      prediction.index = begin + i;
      if (has_labels) {
        prediction.has_label = true;
        prediction.label = batch.labels[i];
      } else if (prediction.predicted_class >= 0) {
        ++summary.predicted_classes[prediction.predicted_class];
      }
      value_sum += prediction.value;
      if (each) each(prediction);
    }
    summary.examples = end;
  }
  if (has_labels) summary.metrics = metrics.Results();
  if (summary.examples > 0) summary.mean_value = value_sum / summary.examples;
  return summary;
}

}  // namespace pstrain
