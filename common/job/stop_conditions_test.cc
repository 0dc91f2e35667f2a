#include "common/job/stop_conditions.h"

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

JobSpec SpecWith(int64_t max_steps, double max_seconds) {
  JobSpec spec;
  spec.mutable_stop()->set_max_steps(max_steps);
  spec.mutable_stop()->set_max_seconds(max_seconds);
  spec.mutable_stop()->set_stop_on_nan_loss(true);
  spec.mutable_eval()->set_best_metric("loss");
  spec.mutable_eval()->set_best_direction(METRIC_DIRECTION_MINIMIZE);
  return spec;
}

JobSpec AccuracySpec() {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_eval()->set_best_metric("accuracy");
  spec.mutable_eval()->set_best_direction(METRIC_DIRECTION_MAXIMIZE);
  return spec;
}

class StopConditionsTest : public ::testing::Test {
 protected:
  // Reports one evaluation and returns its outcome.
  EvalOutcome Eval(StopConditions& stop, int64_t step, const std::string& metric, double value) {
    absl::StatusOr<EvalOutcome> outcome = stop.OnEval(step, {{metric, value}});
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : EvalOutcome();
  }

  FakeClock clock_;
};

TEST_F(StopConditionsTest, NothingStopsAJobBelowItsLimits) {
  StopConditions stop(SpecWith(3000, 600), clock_, clock_.Now());
  clock_.Advance(absl::Seconds(599));
  EXPECT_EQ(stop.OnProgress(2999, 0.5), std::nullopt);
  EXPECT_EQ(stop.decision(), std::nullopt);
}

TEST_F(StopConditionsTest, MaxStepsStopsAtTheStep) {
  StopConditions stop(SpecWith(3000, 0), clock_, clock_.Now());
  std::optional<StopDecision> decision = stop.OnProgress(3000, 0.5);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->reason, STOP_REASON_MAX_STEPS);
  EXPECT_EQ(decision->message, "reached max_steps 3000");
  EXPECT_EQ(decision->global_step, 3000);
}

TEST_F(StopConditionsTest, MaxSecondsStopsEvenWithoutProgress) {
  StopConditions stop(SpecWith(0, 600), clock_, clock_.Now());
  clock_.Advance(absl::Seconds(599));
  EXPECT_EQ(stop.CheckTime(10), std::nullopt);
  clock_.Advance(absl::Seconds(1));
  std::optional<StopDecision> decision = stop.CheckTime(10);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->reason, STOP_REASON_MAX_SECONDS);
  EXPECT_EQ(decision->message, "reached max_seconds 600 at step 10");
}

TEST_F(StopConditionsTest, TrainingTimeCountsFromTheGivenStart) {
  const absl::Time start = clock_.Now();
  clock_.Advance(absl::Seconds(100));  // e.g. waiting for workers before training
  StopConditions stop(SpecWith(0, 50), clock_, clock_.Now());
  EXPECT_EQ(stop.CheckTime(0), std::nullopt);
  StopConditions from_submit(SpecWith(0, 50), clock_, start);
  EXPECT_TRUE(from_submit.CheckTime(0).has_value());
}

TEST_F(StopConditionsTest, NonFiniteLossFailsTheJobWithTheStep) {
  struct Case {
    double loss;
    const char* message;
  };
  for (const Case& c :
       {Case{kNaN, "loss is NaN at step 1234"}, Case{kInf, "loss is inf at step 1234"},
        Case{-kInf, "loss is -inf at step 1234"}}) {
    StopConditions stop(SpecWith(0, 0), clock_, clock_.Now());
    std::optional<StopDecision> decision = stop.OnProgress(1234, c.loss);
    ASSERT_TRUE(decision.has_value()) << c.message;
    EXPECT_EQ(decision->reason, STOP_REASON_NAN_LOSS);
    EXPECT_EQ(decision->message, c.message);
  }
}

TEST_F(StopConditionsTest, NanLossIsIgnoredWhenTheUserSaidSo) {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_stop()->set_stop_on_nan_loss(false);
  StopConditions stop(spec, clock_, clock_.Now());
  EXPECT_EQ(stop.OnProgress(5, kNaN), std::nullopt);
}

TEST_F(StopConditionsTest, NanLossStopsByDefault) {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_stop()->clear_stop_on_nan_loss();
  StopConditions stop(spec, clock_, clock_.Now());
  ASSERT_TRUE(stop.OnProgress(5, kNaN).has_value());
}

TEST_F(StopConditionsTest, ReportWithoutLossChecksOnlyTheLimits) {
  StopConditions stop(SpecWith(10, 0), clock_, clock_.Now());
  EXPECT_EQ(stop.OnProgress(5, std::nullopt), std::nullopt);
  EXPECT_EQ(stop.OnProgress(10, std::nullopt)->reason, STOP_REASON_MAX_STEPS);
}

TEST_F(StopConditionsTest, DivergedLossAtTheLastStepIsStillAFailure) {
  StopConditions stop(SpecWith(100, 0), clock_, clock_.Now());
  EXPECT_EQ(stop.OnProgress(100, kNaN)->reason, STOP_REASON_NAN_LOSS);
}

TEST_F(StopConditionsTest, TheFirstDecisionStands) {
  StopConditions stop(SpecWith(100, 0), clock_, clock_.Now());
  ASSERT_EQ(stop.OnProgress(100, 0.1)->reason, STOP_REASON_MAX_STEPS);
  EXPECT_EQ(stop.OnProgress(101, kNaN)->reason, STOP_REASON_MAX_STEPS);
  StopDecision user = stop.Decide(STOP_REASON_USER, "stopped by a user", 102);
  EXPECT_EQ(user.reason, STOP_REASON_MAX_STEPS);
  EXPECT_EQ(user.global_step, 100);
}

TEST_F(StopConditionsTest, OutsideDecisionStopsTheJob) {
  StopConditions stop(SpecWith(0, 0), clock_, clock_.Now());
  StopDecision decision = stop.Decide(STOP_REASON_USER, "stopped by a user", 42);
  EXPECT_EQ(decision.reason, STOP_REASON_USER);
  EXPECT_EQ(stop.OnProgress(43, 0.1)->reason, STOP_REASON_USER);
}

TEST_F(StopConditionsTest, TargetMetricReachedInItsDirection) {
  JobSpec spec = AccuracySpec();
  spec.mutable_stop()->set_target_metric_value(0.9);
  StopConditions stop(spec, clock_, clock_.Now());
  EXPECT_EQ(Eval(stop, 100, "accuracy", 0.85).stop, std::nullopt);
  EvalOutcome outcome = Eval(stop, 200, "accuracy", 0.91);
  ASSERT_TRUE(outcome.stop.has_value());
  EXPECT_EQ(outcome.stop->reason, STOP_REASON_TARGET_METRIC);
  EXPECT_EQ(outcome.stop->message, "accuracy 0.91 reached the target 0.9 at step 200");
}

TEST_F(StopConditionsTest, TargetLossIsReachedGoingDown) {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_stop()->set_target_metric_value(0.3);
  StopConditions stop(spec, clock_, clock_.Now());
  EXPECT_EQ(Eval(stop, 100, "loss", 0.5).stop, std::nullopt);
  EXPECT_EQ(Eval(stop, 200, "loss", 0.3).stop->reason, STOP_REASON_TARGET_METRIC);
}

TEST_F(StopConditionsTest, TargetOfZeroIsATarget) {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_stop()->set_target_metric_value(0);
  StopConditions stop(spec, clock_, clock_.Now());
  EXPECT_EQ(Eval(stop, 100, "loss", 0.01).stop, std::nullopt);
  EXPECT_TRUE(Eval(stop, 200, "loss", 0).stop.has_value());
}

TEST_F(StopConditionsTest, WithoutATargetNoValueStops) {
  StopConditions stop(AccuracySpec(), clock_, clock_.Now());
  EXPECT_EQ(Eval(stop, 100, "accuracy", 1.0).stop, std::nullopt);
}

TEST_F(StopConditionsTest, EarlyStoppingAfterPatienceEvaluationsWithoutImprovement) {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_stop()->set_early_stopping_patience(5);
  spec.mutable_stop()->set_min_delta(0.001);
  StopConditions stop(spec, clock_, clock_.Now());
  EXPECT_EQ(Eval(stop, 100, "loss", 0.5).stop, std::nullopt);
  EXPECT_EQ(Eval(stop, 200, "loss", 0.4).stop, std::nullopt);  // improved: count restarts
  // Four evaluations that improve by no more than min_delta...
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Eval(stop, 300 + 100 * i, "loss", 0.3995 - 0.0001 * i).stop, std::nullopt) << i;
  }
  // ...and a fifth.
  EvalOutcome outcome = Eval(stop, 700, "loss", 0.45);
  ASSERT_TRUE(outcome.stop.has_value());
  EXPECT_EQ(outcome.stop->reason, STOP_REASON_EARLY_STOPPING);
  EXPECT_THAT(outcome.stop->message,
              HasSubstr("no improvement of loss by more than 0.001 in 5 evaluations"));
  EXPECT_EQ(outcome.stop->global_step, 700);
}

TEST_F(StopConditionsTest, ImprovementResetsThePatienceCount) {
  JobSpec spec = AccuracySpec();
  spec.mutable_stop()->set_early_stopping_patience(2);
  StopConditions stop(spec, clock_, clock_.Now());
  EXPECT_EQ(Eval(stop, 1, "accuracy", 0.5).stop, std::nullopt);
  EXPECT_EQ(Eval(stop, 2, "accuracy", 0.5).stop, std::nullopt);  // 1 without
  EXPECT_EQ(Eval(stop, 3, "accuracy", 0.6).stop, std::nullopt);  // improved
  EXPECT_EQ(Eval(stop, 4, "accuracy", 0.6).stop, std::nullopt);  // 1 without
  EXPECT_EQ(Eval(stop, 5, "accuracy", 0.55).stop->reason, STOP_REASON_EARLY_STOPPING);
}

TEST_F(StopConditionsTest, NanMetricIsNeverAnImprovement) {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_stop()->set_early_stopping_patience(2);
  StopConditions stop(spec, clock_, clock_.Now());
  EXPECT_FALSE(Eval(stop, 1, "loss", kNaN).is_best);
  EXPECT_EQ(Eval(stop, 2, "loss", kNaN).stop->reason, STOP_REASON_EARLY_STOPPING);
  EXPECT_EQ(stop.best(), std::nullopt);
}

TEST_F(StopConditionsTest, TracksTheBestMetricAndItsStep) {
  StopConditions stop(AccuracySpec(), clock_, clock_.Now());
  EXPECT_TRUE(Eval(stop, 100, "accuracy", 0.80).is_best);
  EXPECT_TRUE(Eval(stop, 200, "accuracy", 0.85).is_best);
  EXPECT_FALSE(Eval(stop, 300, "accuracy", 0.85).is_best);  // a tie is not better
  EXPECT_FALSE(Eval(stop, 400, "accuracy", 0.83).is_best);
  std::optional<BestMetric> best = stop.best();
  ASSERT_TRUE(best.has_value());
  EXPECT_DOUBLE_EQ(best->value, 0.85);
  EXPECT_EQ(best->step, 200);
}

TEST_F(StopConditionsTest, BestMovesOnSmallImprovementsThatDoNotResetPatience) {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_stop()->set_early_stopping_patience(3);
  spec.mutable_stop()->set_min_delta(0.1);
  StopConditions stop(spec, clock_, clock_.Now());
  Eval(stop, 1, "loss", 1.0);
  EXPECT_TRUE(Eval(stop, 2, "loss", 0.95).is_best);
  EXPECT_TRUE(Eval(stop, 3, "loss", 0.92).is_best);
  EvalOutcome outcome = Eval(stop, 4, "loss", 0.91);
  EXPECT_TRUE(outcome.is_best);
  ASSERT_TRUE(outcome.stop.has_value());
  EXPECT_EQ(outcome.stop->reason, STOP_REASON_EARLY_STOPPING);
  EXPECT_THAT(outcome.stop->message, HasSubstr("(best 0.91 at step 4)"));
}

TEST_F(StopConditionsTest, ReEvaluatingAnOlderCheckpointDoesNotCount) {
  JobSpec spec = SpecWith(0, 0);
  spec.mutable_stop()->set_early_stopping_patience(1);
  StopConditions stop(spec, clock_, clock_.Now());
  EXPECT_TRUE(Eval(stop, 200, "loss", 0.5).counted);
  EvalOutcome again = Eval(stop, 200, "loss", 0.9);
  EXPECT_FALSE(again.counted);
  EXPECT_FALSE(again.is_best);
  EXPECT_EQ(again.stop, std::nullopt);
  EvalOutcome older = Eval(stop, 100, "loss", 0.1);
  EXPECT_FALSE(older.counted);
  EXPECT_FALSE(older.is_best);
  EXPECT_EQ(stop.best()->step, 200);
}

TEST_F(StopConditionsTest, EvaluationAfterTheDecisionStillTracksTheBest) {
  StopConditions stop(SpecWith(100, 0), clock_, clock_.Now());
  ASSERT_TRUE(stop.OnProgress(100, 0.2).has_value());
  EvalOutcome final_eval = Eval(stop, 100, "loss", 0.2);
  EXPECT_TRUE(final_eval.is_best);
  EXPECT_EQ(final_eval.stop->reason, STOP_REASON_MAX_STEPS);
}

TEST_F(StopConditionsTest, EvaluationWithoutTheBestMetricIsRefused) {
  StopConditions stop(AccuracySpec(), clock_, clock_.Now());
  absl::StatusOr<EvalOutcome> outcome = stop.OnEval(100, {{"loss", 0.3}});
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(outcome.status().message(), HasSubstr("lacks the best metric 'accuracy'"));
  // It changed nothing: the same step can still be evaluated.
  EXPECT_TRUE(Eval(stop, 100, "accuracy", 0.7).counted);
}

TEST_F(StopConditionsTest, DirectionDefaultsByMetricName) {
  JobSpec spec;
  spec.mutable_eval()->set_best_metric("auc");
  StopConditions auc(spec, clock_, clock_.Now());
  EXPECT_EQ(auc.direction(), METRIC_DIRECTION_MAXIMIZE);
  StopConditions loss(JobSpec(), clock_, clock_.Now());
  EXPECT_EQ(loss.best_metric(), "loss");
  EXPECT_EQ(loss.direction(), METRIC_DIRECTION_MINIMIZE);
}

}  // namespace
}  // namespace pstrain
