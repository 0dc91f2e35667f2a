#include "common/job/export_policy.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

JobSpec SpecWith(ExportStrategy strategy, const std::string& metric, MetricDirection direction) {
  JobSpec spec;
  spec.set_mode(JOB_MODE_TRAIN_AND_EVAL);
  spec.mutable_checkpoint()->set_model_dir("/models/m");
  spec.mutable_export_()->set_strategy(strategy);
  spec.mutable_eval()->set_best_metric(metric);
  spec.mutable_eval()->set_best_direction(direction);
  return spec;
}

std::map<std::string, double> Loss(double value) { return {{"loss", value}}; }

TEST(ExportPolicyTest, BestIsExportedOnlyWhenItBeatsTheBestSoFar) {
  ExportPolicy policy(SpecWith(EXPORT_STRATEGY_BEST, "loss", METRIC_DIRECTION_MINIMIZE));
  EXPECT_TRUE(policy.Choose(Loss(0.9), CheckpointKind::kPeriodic)
                  .best);  // the first evaluation is the best so far
  policy.RecordBest(Loss(0.9));
  EXPECT_TRUE(policy.Choose(Loss(0.5), CheckpointKind::kPeriodic).best);
  policy.RecordBest(Loss(0.5));
  // Worse, equal: not exported.
  EXPECT_FALSE(policy.Choose(Loss(0.7), CheckpointKind::kPeriodic).best);
  EXPECT_FALSE(policy.Choose(Loss(0.5), CheckpointKind::kPeriodic).best);
  // The final checkpoint is exported under final/ whether or not it is best.
  const ExportChoice last = policy.Choose(Loss(0.6), CheckpointKind::kFinal);
  EXPECT_FALSE(last.best);
  EXPECT_TRUE(last.final);
  EXPECT_EQ(policy.best_value(), 0.5);
}

TEST(ExportPolicyTest, TheDirectionDecidesWhatBeats) {
  ExportPolicy policy(SpecWith(EXPORT_STRATEGY_BEST, "accuracy", METRIC_DIRECTION_MAXIMIZE));
  policy.RecordBest({{"accuracy", 0.8}});
  EXPECT_TRUE(policy.IsImprovement({{"accuracy", 0.81}}));
  EXPECT_FALSE(policy.IsImprovement({{"accuracy", 0.79}}));
}

TEST(ExportPolicyTest, AMissingOrNanMetricRanksNothing) {
  ExportPolicy policy(SpecWith(EXPORT_STRATEGY_BEST, "loss", METRIC_DIRECTION_MINIMIZE));
  EXPECT_FALSE(policy.IsImprovement({{"accuracy", 0.9}}));
  EXPECT_FALSE(policy.IsImprovement(Loss(kNaN)));
  policy.RecordBest(Loss(kNaN));
  EXPECT_FALSE(policy.best_value().has_value());
}

TEST(ExportPolicyTest, FinalAndNoneExportNoBest) {
  ExportPolicy final_only(SpecWith(EXPORT_STRATEGY_FINAL, "loss", METRIC_DIRECTION_MINIMIZE));
  EXPECT_FALSE(final_only.Choose(Loss(0.1), CheckpointKind::kPeriodic).best);
  EXPECT_FALSE(final_only.Choose(Loss(0.1), CheckpointKind::kPeriodic).final);
  EXPECT_TRUE(final_only.Choose(Loss(0.1), CheckpointKind::kFinal).final);
  EXPECT_FALSE(final_only.Choose(Loss(0.1), CheckpointKind::kFinal).best);

  ExportPolicy none(SpecWith(EXPORT_STRATEGY_NONE, "loss", METRIC_DIRECTION_MINIMIZE));
  const ExportChoice choice = none.Choose(Loss(0.1), CheckpointKind::kFinal);
  EXPECT_FALSE(choice.best);
  EXPECT_FALSE(choice.final);
}

TEST(ExportPolicyTest, FoldersAndDefaults) {
  JobSpec spec = SpecWith(EXPORT_STRATEGY_UNSPECIFIED, "loss", METRIC_DIRECTION_MINIMIZE);
  ExportPolicy defaulted(spec);
  EXPECT_EQ(defaulted.strategy(), EXPORT_STRATEGY_BEST);
  EXPECT_EQ(defaulted.exports_to_keep(), 3);
  EXPECT_EQ(defaulted.best_dir(), "/models/m/export/best");
  EXPECT_EQ(defaulted.final_dir(), "/models/m/export/final");

  spec.mutable_export_()->set_export_dir("/exports/m");
  spec.mutable_export_()->set_exports_to_keep(0);
  ExportPolicy placed(spec);
  EXPECT_EQ(placed.best_dir(), "/exports/m/best");
  EXPECT_EQ(placed.exports_to_keep(), 0);

  // JOB_MODE_TRAIN runs no evaluation to rank checkpoints by.
  spec.set_mode(JOB_MODE_TRAIN);
  spec.mutable_export_()->clear_strategy();
  EXPECT_EQ(ExportPolicy(spec).strategy(), EXPORT_STRATEGY_FINAL);
}

}  // namespace
}  // namespace pstrain
