#include "common/evaluation/eval_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace {

constexpr const char* kKnown[] = {"loss",   "accuracy", "top_k_accuracy", "auc", "precision",
                                  "recall", "mse"};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The exact ROC AUC of scores against positive flags: the probability that a
// random positive outscores a random negative, ties counting half.
double BinaryAuc(std::vector<std::pair<float, bool>>* scored) {
  std::sort(scored->begin(), scored->end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  double positives = 0, negatives = 0, rank_sum = 0;
  for (size_t i = 0; i < scored->size();) {
    size_t j = i;
    while (j < scored->size() && (*scored)[j].first == (*scored)[i].first) ++j;
    // Ranks i+1 .. j share their average.
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if ((*scored)[k].second) {
        rank_sum += average_rank;
        ++positives;
      } else {
        ++negatives;
      }
    }
    i = j;
  }
  if (positives == 0 || negatives == 0) return kNaN;
  return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace

absl::StatusOr<EvalMetrics> EvalMetrics::Create(const EvalMetricsOptions& options) {
  if (options.top_k < 1) {
    return absl::InvalidArgumentError(absl::StrCat("top_k must be > 0, got ", options.top_k));
  }
  if (options.width < 1) {
    return absl::InvalidArgumentError(absl::StrCat("width must be > 0, got ", options.width));
  }
  for (const std::string& name : options.metrics) {
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown metric \"", name, "\"; known: ", absl::StrJoin(kKnown, ", ")));
    }
    if (options.kind == PredictionKind::kRegression && name != "loss" && name != "mse") {
      return absl::InvalidArgumentError(
          absl::StrCat("metric ", name, " needs class labels; the model is a regression"));
    }
  }
  return EvalMetrics(options);
}

EvalMetrics::EvalMetrics(const EvalMetricsOptions& options) : options_(options) {
  const int64_t classes = NumClasses();
  true_positives_.assign(classes, 0);
  false_positives_.assign(classes, 0);
  false_negatives_.assign(classes, 0);
}

bool EvalMetrics::Wants(const std::string& name) const {
  return std::find(options_.metrics.begin(), options_.metrics.end(), name) !=
         options_.metrics.end();
}

int64_t EvalMetrics::NumClasses() const {
  switch (options_.kind) {
    case PredictionKind::kClassProbabilities:
      return options_.width;
    case PredictionKind::kBinaryProbability:
      return 2;
    case PredictionKind::kRegression:
      return 0;
  }
  return 0;
}

int EvalMetrics::ClassOf(float label) const {
  if (options_.kind == PredictionKind::kBinaryProbability) return label >= 0.5f ? 1 : 0;
  return static_cast<int>(label);
}

absl::Status EvalMetrics::Add(absl::Span<const float> predictions, absl::Span<const float> labels,
                              absl::Span<const float> example_losses) {
  const int64_t n = static_cast<int64_t>(labels.size());
  const int64_t width = options_.width;
  if (static_cast<int64_t>(predictions.size()) != n * width) {
    return absl::InvalidArgumentError(
        absl::StrCat(predictions.size(), " predictions for ", n, " labels of width ", width));
  }
  if (Wants("loss") && static_cast<int64_t>(example_losses.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(example_losses.size(), " example losses for ", n, " labels"));
  }
  if (options_.kind == PredictionKind::kClassProbabilities) {
    for (int64_t i = 0; i < n; ++i) {
      if (!(labels[i] >= 0 && labels[i] < width) || labels[i] != std::floor(labels[i])) {
        return absl::InvalidArgumentError(absl::StrCat("example ", i, " has label ", labels[i],
                                                       ", not a class in [0, ", width, ")"));
      }
    }
  }
  const bool want_auc = Wants("auc");
  for (int64_t i = 0; i < n; ++i) {
    const float* p = predictions.data() + i * width;
    const float y = labels[i];
    if (!example_losses.empty()) loss_sum_ += example_losses[i];
    switch (options_.kind) {
      case PredictionKind::kRegression: {
        const double error = static_cast<double>(p[0]) - y;
        squared_error_sum_ += error * error;
        break;
      }
      case PredictionKind::kBinaryProbability: {
        const double error = static_cast<double>(p[0]) - y;
        squared_error_sum_ += error * error;
        const int truth = ClassOf(y);
        const int predicted = p[0] >= 0.5f ? 1 : 0;
        correct_ += predicted == truth;
        // Top-k over two classes: k >= 2 always hits; k = 1 is accuracy.
        top_k_correct_ += options_.top_k >= 2 || predicted == truth;
        if (predicted == truth) {
          ++true_positives_[truth];
        } else {
          ++false_positives_[predicted];
          ++false_negatives_[truth];
        }
        if (want_auc) {
          scores_.push_back(p[0]);
          classes_.push_back(truth);
        }
        break;
      }
      case PredictionKind::kClassProbabilities: {
        const int truth = ClassOf(y);
        const int predicted = static_cast<int>(std::max_element(p, p + width) - p);
        correct_ += predicted == truth;
        int64_t higher = 0;
        double squared = 0;
        for (int64_t c = 0; c < width; ++c) {
          higher += p[c] > p[truth];
          const double error = p[c] - (c == truth ? 1.0 : 0.0);
          squared += error * error;
        }
        squared_error_sum_ += squared;
        top_k_correct_ += higher < options_.top_k;
        if (predicted == truth) {
          ++true_positives_[truth];
        } else {
          ++false_positives_[predicted];
          ++false_negatives_[truth];
        }
        if (want_auc) {
          scores_.insert(scores_.end(), p, p + width);
          classes_.push_back(truth);
        }
        break;
      }
    }
  }
  num_examples_ += n;
  return absl::OkStatus();
}

absl::Status EvalMetrics::Merge(const EvalMetrics& other) {
  if (other.options_.metrics != options_.metrics || other.options_.top_k != options_.top_k ||
      other.options_.kind != options_.kind || other.options_.width != options_.width) {
    return absl::FailedPreconditionError("merging metrics accumulated with other options");
  }
  num_examples_ += other.num_examples_;
  loss_sum_ += other.loss_sum_;
  correct_ += other.correct_;
  top_k_correct_ += other.top_k_correct_;
  squared_error_sum_ += other.squared_error_sum_;
  for (size_t c = 0; c < true_positives_.size(); ++c) {
    true_positives_[c] += other.true_positives_[c];
    false_positives_[c] += other.false_positives_[c];
    false_negatives_[c] += other.false_negatives_[c];
  }
  scores_.insert(scores_.end(), other.scores_.begin(), other.scores_.end());
  classes_.insert(classes_.end(), other.classes_.begin(), other.classes_.end());
  return absl::OkStatus();
}

double EvalMetrics::Auc() const {
  std::vector<std::pair<float, bool>> scored(classes_.size());
  if (options_.kind == PredictionKind::kBinaryProbability) {
    for (size_t i = 0; i < classes_.size(); ++i) scored[i] = {scores_[i], classes_[i] == 1};
    return BinaryAuc(&scored);
  }
  const int64_t width = options_.width;
  double sum = 0;
  int counted = 0;
  for (int64_t c = 0; c < width; ++c) {
    for (size_t i = 0; i < classes_.size(); ++i) {
      scored[i] = {scores_[i * width + c], classes_[i] == c};
    }
    const double auc = BinaryAuc(&scored);
    if (!std::isnan(auc)) {
      sum += auc;
      ++counted;
    }
  }
  return counted == 0 ? kNaN : sum / counted;
}

void EvalMetrics::PrecisionRecall(double* precision, double* recall) const {
  auto ratio = [](int64_t num, int64_t den) {
    return den == 0 ? 0.0 : static_cast<double>(num) / den;
  };
  if (options_.kind == PredictionKind::kBinaryProbability) {
    *precision = ratio(true_positives_[1], true_positives_[1] + false_positives_[1]);
    *recall = ratio(true_positives_[1], true_positives_[1] + false_negatives_[1]);
    return;
  }
  double p = 0, r = 0;
  const size_t classes = true_positives_.size();
  for (size_t c = 0; c < classes; ++c) {
    p += ratio(true_positives_[c], true_positives_[c] + false_positives_[c]);
    r += ratio(true_positives_[c], true_positives_[c] + false_negatives_[c]);
  }
  *precision = p / classes;
  *recall = r / classes;
}

std::map<std::string, double> EvalMetrics::Results() const {
  std::map<std::string, double> results;
  const double n = static_cast<double>(num_examples_);
  for (const std::string& name : options_.metrics) {
    if (num_examples_ == 0) {
      results[name] = kNaN;
    } else if (name == "loss") {
      results[name] = loss_sum_ / n;
    } else if (name == "accuracy") {
      results[name] = correct_ / n;
    } else if (name == "top_k_accuracy") {
      results[name] = top_k_correct_ / n;
    } else if (name == "auc") {
      results[name] = Auc();
    } else if (name == "precision" || name == "recall") {
      double precision, recall;
      PrecisionRecall(&precision, &recall);
      results[name] = name == "precision" ? precision : recall;
    } else if (name == "mse") {
      results[name] = squared_error_sum_ / n;
    }
  }
  return results;
}

}  // namespace pstrain
