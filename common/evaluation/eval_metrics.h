#ifndef PSTRAIN_COMMON_EVALUATION_EVAL_METRICS_H_
#define PSTRAIN_COMMON_EVALUATION_EVAL_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/model/model.h"

namespace pstrain {

struct EvalMetricsOptions {
  // Any of: loss, accuracy, top_k_accuracy, auc, precision, recall, mse.
  std::vector<std::string> metrics = {"loss", "accuracy"};
  // For top_k_accuracy; > 0.
  int top_k = 5;
  // What the predictions are, and how many per example (classes, or 1).
  PredictionKind kind = PredictionKind::kClassProbabilities;
  int64_t width = 2;
};

// Evaluation metrics accumulated over a whole evaluation set, batch by batch,
// and mergeable: metrics of disjoint parts (batches, workers) merged give the
// metrics of the union, exactly, AUC included. Thread-compatible.
//
// Definitions (N examples, p the predictions, y the labels):
//   loss            mean of the per-example losses the model reported.
//   accuracy        classes: argmax p == y. Binary: (p >= 0.5) == (y >= 0.5).
//   top_k_accuracy  classes: fewer than k classes score strictly higher than
//                   y's. Binary is treated as two classes.
//   auc             area under the ROC curve, exact: by sorting every score,
//                   ties counted as half (the Mann-Whitney statistic).
//                   Binary: of p. Classes: the mean over classes of the
//                   one-vs-rest AUC of p[c], over the classes that have both
//                   positive and negative examples. NaN if there are none.
//   precision       binary: TP / (TP + FP) with p >= 0.5 predicting 1.
//                   Classes: the mean over classes of the same, one-vs-rest
//                   with argmax predicting. 0 where nothing was predicted.
//   recall          TP / (TP + FN), averaged likewise. 0 where no positives.
//   mse             regression: mean (p - y)^2. Binary: the Brier score.
//                   Classes: mean of sum_c (p_c - onehot(y)_c)^2.
class EvalMetrics {
 public:
  // InvalidArgument: an unknown metric name, top_k < 1, width < 1, or a
  // metric that needs labels with classes (accuracy, top_k_accuracy, auc,
  // precision, recall) for a regression.
  static absl::StatusOr<EvalMetrics> Create(const EvalMetricsOptions& options);

  // Adds one batch: predictions [n, width], labels [n], example_losses [n]
  // (may be empty when "loss" is not asked for).
  // InvalidArgument: sizes that disagree, or a class label outside
  // [0, width). Nothing is added then.
  absl::Status Add(absl::Span<const float> predictions, absl::Span<const float> labels,
                   absl::Span<const float> example_losses);

  // Adds what `other` accumulated. FailedPrecondition: other options.
  absl::Status Merge(const EvalMetrics& other);

  // The value of every requested metric by name. NaN where there is no
  // example yet.
  std::map<std::string, double> Results() const;

  int64_t num_examples() const { return num_examples_; }
  const EvalMetricsOptions& options() const { return options_; }

 private:
  explicit EvalMetrics(const EvalMetricsOptions& options);

  bool Wants(const std::string& name) const;
  int64_t NumClasses() const;
  int ClassOf(float label) const;
  double Auc() const;
  void PrecisionRecall(double* precision, double* recall) const;

  EvalMetricsOptions options_;
  int64_t num_examples_ = 0;
  double loss_sum_ = 0;
  int64_t correct_ = 0;
  int64_t top_k_correct_ = 0;
  double squared_error_sum_ = 0;
  // Per class (2 for binary): true positives, false positives, false
  // negatives of the thresholded or argmax prediction.
  std::vector<int64_t> true_positives_, false_positives_, false_negatives_;
  // For AUC: every example's scores (one for binary, width for classes) and
  // class. Exact AUC needs them all.
  std::vector<float> scores_;
  std::vector<int32_t> classes_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EVALUATION_EVAL_METRICS_H_
