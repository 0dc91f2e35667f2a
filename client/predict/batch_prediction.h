#ifndef PSTRAIN_CLIENT_PREDICT_BATCH_PREDICTION_H_
#define PSTRAIN_CLIENT_PREDICT_BATCH_PREDICTION_H_

// Running an exported model over every example of a source, batch by
// batch, and summing up: accuracy and loss (or mse) when the examples have
// labels, the predicted classes (or values) when they do not.

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/data/example_source.h"
#include "common/export/exported_model.h"

namespace pstrain {

// One example's prediction, as printed: the class with the highest
// probability and that probability, or the predicted value.
struct ExamplePrediction {
  int64_t index = 0;
  int64_t predicted_class = -1;  // -1 for a regression
  double probability = 0;        // of predicted_class
  double value = 0;              // regression
  bool has_label = false;
  float label = 0;
};

// "index class probability [label]" (or "index value [label]") lines.
std::string FormatPredictionHeader(PredictionKind kind, bool has_labels);
std::string FormatPrediction(const ExamplePrediction& prediction);

struct PredictionSummary {
  int64_t examples = 0;
  bool has_labels = false;
  // With labels: "loss" and "accuracy" (classification) or "mse"
  // (regression), defined as the evaluator defines them
  // (common/evaluation/eval_metrics.h).
  std::map<std::string, double> metrics;
  // Without labels: how many examples each class was predicted for.
  std::map<int64_t, int64_t> predicted_classes;
  double mean_value = 0;  // regression
};

// "10000 examples: accuracy 0.8612, loss 0.3921" and the like.
std::string FormatSummary(const PredictionSummary& summary);

// Predicts every example of `source` in batches of `batch_size` (> 0) and
// calls `each` (may be empty) per example, in order.
// InvalidArgument: examples the model cannot read; labels outside the
// model's classes (the message names the example).
absl::StatusOr<PredictionSummary> PredictAll(
    ExportedModel& model, const ExampleSource& source, bool has_labels, int64_t batch_size,
    const std::function<void(const ExamplePrediction&)>& each);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_PREDICT_BATCH_PREDICTION_H_
