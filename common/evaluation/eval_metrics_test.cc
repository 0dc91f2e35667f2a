#include "common/evaluation/eval_metrics.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

EvalMetrics Make(PredictionKind kind, int64_t width, std::vector<std::string> names,
                 int top_k = 2) {
  EvalMetricsOptions options;
  options.kind = kind;
  options.width = width;
  options.metrics = std::move(names);
  options.top_k = top_k;
  auto metrics = EvalMetrics::Create(options);
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  return std::move(metrics).value();
}

// Pairwise definition of AUC: P(score of a positive > score of a negative),
// ties counted half.
double BruteForceAuc(const std::vector<float>& scores, const std::vector<int>& positive) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    for (size_t j = 0; j < scores.size(); ++j) {
      if (positive[i] && !positive[j]) {
        wins += scores[i] > scores[j] ? 1 : scores[i] == scores[j] ? 0.5 : 0;
        ++pairs;
      }
    }
  }
  return wins / pairs;
}

TEST(EvalMetricsTest, MulticlassByHand) {
  EvalMetrics m = Make(PredictionKind::kClassProbabilities, 3,
                       {"loss", "accuracy", "top_k_accuracy", "precision", "recall", "mse"});
  // Predicted classes: 0, 2, 1, 1. Labels: 0, 1, 1, 2.
  const std::vector<float> p = {0.7f, 0.2f, 0.1f,  //
                                0.1f, 0.3f, 0.6f,  //
                                0.2f, 0.5f, 0.3f,  //
                                0.1f, 0.8f, 0.1f};
  const std::vector<float> y = {0, 1, 1, 2};
  const std::vector<float> losses = {1, 2, 3, 4};
  ASSERT_TRUE(m.Add(p, y, losses).ok());
  auto r = m.Results();
  EXPECT_DOUBLE_EQ(r["loss"], 2.5);
  EXPECT_DOUBLE_EQ(r["accuracy"], 0.5);
  // Top-2: example 3 has label 2 scored 0.1, beaten by 0.8 only... and tied
  // with 0.1, which does not count, so it is in the top 2.
  EXPECT_DOUBLE_EQ(r["top_k_accuracy"], 1.0);
  // Class 0: TP 1, FP 0, FN 0. Class 1: TP 1, FP 1, FN 1. Class 2: TP 0,
  // FP 1, FN 1.
  EXPECT_DOUBLE_EQ(r["precision"], (1 + 0.5 + 0) / 3);
  EXPECT_DOUBLE_EQ(r["recall"], (1 + 0.5 + 0) / 3);
  const double mse =
      ((0.09 + 0.04 + 0.01) + (0.01 + 0.49 + 0.36) + (0.04 + 0.25 + 0.09) + (0.01 + 0.64 + 0.81)) /
      4;
  EXPECT_NEAR(r["mse"], mse, 1e-6);
}

TEST(EvalMetricsTest, BinaryByHand) {
  EvalMetrics m = Make(PredictionKind::kBinaryProbability, 1,
                       {"accuracy", "precision", "recall", "auc", "mse"});
  const std::vector<float> p = {0.9f, 0.6f, 0.4f, 0.2f, 0.6f};
  const std::vector<float> y = {1, 0, 1, 0, 1};
  ASSERT_TRUE(m.Add(p, y, {}).ok());
  auto r = m.Results();
  EXPECT_DOUBLE_EQ(r["accuracy"], 3.0 / 5);
  EXPECT_DOUBLE_EQ(r["precision"], 2.0 / 3);  // predicted 1: 0.9, 0.6, 0.6
  EXPECT_DOUBLE_EQ(r["recall"], 2.0 / 3);     // positives: 0.9, 0.4, 0.6
  // Positives 0.9, 0.4, 0.6 against negatives 0.6, 0.2: wins 2 + 1 + 1.5.
  EXPECT_DOUBLE_EQ(r["auc"], 4.5 / 6);
  EXPECT_NEAR(r["mse"], (0.01 + 0.36 + 0.36 + 0.04 + 0.16) / 5, 1e-6);
}

TEST(EvalMetricsTest, AucMatchesPairwiseDefinitionWithTies) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> level(0, 9);  // coarse scores: many ties
  std::vector<float> scores;
  std::vector<int> positive;
  std::vector<float> labels;
  for (int i = 0; i < 500; ++i) {
    const int l = level(rng);
    const bool pos = std::uniform_int_distribution<int>(0, 9)(rng) < l;
    scores.push_back(l / 10.0f);
    positive.push_back(pos);
    labels.push_back(pos ? 1 : 0);
  }
  EvalMetrics m = Make(PredictionKind::kBinaryProbability, 1, {"auc"});
  ASSERT_TRUE(m.Add(scores, labels, {}).ok());
  EXPECT_NEAR(m.Results()["auc"], BruteForceAuc(scores, positive), 1e-12);
}

TEST(EvalMetricsTest, MergedPartsEqualTheWhole) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(0, 1);
  const int n = 300, width = 4;
  std::vector<float> p(n * width), y(n), losses(n);
  for (int i = 0; i < n; ++i) {
    float sum = 0;
    for (int c = 0; c < width; ++c) sum += p[i * width + c] = u(rng);
    for (int c = 0; c < width; ++c) p[i * width + c] /= sum;
    y[i] = static_cast<float>(i % width);
    losses[i] = u(rng);
  }
  const std::vector<std::string> all = {"loss",   "accuracy", "top_k_accuracy", "auc", "precision",
                                        "recall", "mse"};
  EvalMetrics whole = Make(PredictionKind::kClassProbabilities, width, all);
  ASSERT_TRUE(whole.Add(p, y, losses).ok());
  EvalMetrics a = Make(PredictionKind::kClassProbabilities, width, all);
  EvalMetrics b = Make(PredictionKind::kClassProbabilities, width, all);
  const int cut = 123;
  ASSERT_TRUE(a.Add(absl::MakeConstSpan(p).subspan(0, cut * width),
                    absl::MakeConstSpan(y).subspan(0, cut),
                    absl::MakeConstSpan(losses).subspan(0, cut))
                  .ok());
  ASSERT_TRUE(b.Add(absl::MakeConstSpan(p).subspan(cut * width),
                    absl::MakeConstSpan(y).subspan(cut), absl::MakeConstSpan(losses).subspan(cut))
                  .ok());
  ASSERT_TRUE(a.Merge(b).ok());
  EXPECT_EQ(a.num_examples(), n);
  auto merged = a.Results();
  for (const auto& [name, value] : whole.Results()) {
    EXPECT_NEAR(merged[name], value, 1e-9) << name;
  }
  EvalMetrics other = Make(PredictionKind::kClassProbabilities, width, {"loss"});
  EXPECT_EQ(a.Merge(other).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(EvalMetricsTest, RegressionAndRefusals) {
  EvalMetrics m = Make(PredictionKind::kRegression, 1, {"loss", "mse"});
  ASSERT_TRUE(m.Add({1, 2}, {0, 4}, {1, 4}).ok());
  EXPECT_DOUBLE_EQ(m.Results()["mse"], 2.5);
  EXPECT_TRUE(std::isnan(Make(PredictionKind::kRegression, 1, {"mse"}).Results()["mse"]));

  EvalMetricsOptions options;
  options.kind = PredictionKind::kRegression;
  options.width = 1;
  options.metrics = {"accuracy"};
  EXPECT_EQ(EvalMetrics::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.metrics = {"f1"};
  EXPECT_EQ(EvalMetrics::Create(options).status().code(), absl::StatusCode::kInvalidArgument);

  EvalMetrics c = Make(PredictionKind::kClassProbabilities, 2, {"accuracy"});
  EXPECT_EQ(c.Add({0.5f, 0.5f}, {2}, {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.Add({0.5f, 0.5f, 1}, {1}, {}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.num_examples(), 0);
}

}  // namespace
}  // namespace pstrain
