#include "server/coordinator/evaluation_ledger.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

TEST(EvaluationLedgerTest, KeepsTheMetricsOfEachEvaluatedCheckpoint) {
  EvaluationLedger ledger;
  ledger.RecordMetrics(200, {{"accuracy", 0.81}});
  ledger.RecordMetrics(400, {{"accuracy", 0.86}});
  EXPECT_TRUE(ledger.Evaluated(400));
  EXPECT_FALSE(ledger.Evaluated(600));
  const auto all = ledger.AllMetrics();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_DOUBLE_EQ(all.at(200).at("accuracy"), 0.81);
}

TEST(EvaluationLedgerTest, ForgettingADeletedCheckpointSaysWhetherTheEvaluatorEverTookItUp) {
  EvaluationLedger ledger;
  ledger.RecordMetrics(200, {{"accuracy", 0.81}});
  ledger.Account(400);  // skipped
  ledger.MarkUnevaluable(600, "shard 1 is missing");
  EXPECT_FALSE(ledger.Forget(200));
  EXPECT_FALSE(ledger.Evaluated(200));
  EXPECT_FALSE(ledger.Forget(400));
  EXPECT_FALSE(ledger.Forget(600));
  EXPECT_TRUE(ledger.Forget(800));  // never taken up
}

TEST(EvaluationLedgerTest, SaysWhyACheckpointCannotBeEvaluated) {
  EvaluationLedger ledger;
  EXPECT_EQ(ledger.WhyUnevaluable(600), std::nullopt);
  ledger.MarkUnevaluable(600, "shard 1 is missing");
  EXPECT_EQ(ledger.WhyUnevaluable(600), "shard 1 is missing");
  EXPECT_FALSE(ledger.Evaluated(600));
}

TEST(EvaluationLedgerTest, RemembersWhyAContinuousEvaluationIsDone) {
  EvaluationLedger ledger;
  EXPECT_EQ(ledger.evaluator_done(), std::nullopt);
  ledger.MarkEvaluatorDone("evaluated the final checkpoint ckpt-3000");
  EXPECT_EQ(ledger.evaluator_done(), "evaluated the final checkpoint ckpt-3000");
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
