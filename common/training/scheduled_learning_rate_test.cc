#include "common/training/scheduled_learning_rate.h"

#include <cmath>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

ScheduledLearningRate Make(const OptimizerSpec& spec) {
  auto lr = ScheduledLearningRate::Create(spec);
  EXPECT_TRUE(lr.ok()) << lr.status();
  return std::move(lr).value();
}

TEST(ScheduledLearningRateTest, ConstantAndDefault) {
  OptimizerSpec spec;
  EXPECT_NEAR(Make(spec).At(1000), 0.01, 1e-9);
  spec.set_learning_rate(0.5f);
  EXPECT_DOUBLE_EQ(Make(spec).At(0), 0.5);
}

TEST(ScheduledLearningRateTest, Decays) {
  OptimizerSpec spec;
  spec.set_learning_rate(1);
  spec.mutable_schedule()->mutable_step()->set_step_size(10);
  EXPECT_DOUBLE_EQ(Make(spec).At(9), 1);
  EXPECT_NEAR(Make(spec).At(25), 0.01, 1e-9);

  spec.mutable_schedule()->mutable_exponential()->set_decay_steps(10);
  spec.mutable_schedule()->mutable_exponential()->set_rate(0.5f);
  EXPECT_NEAR(Make(spec).At(15), std::pow(0.5, 1.5), 1e-9);
  spec.mutable_schedule()->mutable_exponential()->set_staircase(true);
  EXPECT_NEAR(Make(spec).At(15), 0.5, 1e-9);

  spec.mutable_schedule()->mutable_cosine()->set_decay_steps(100);
  spec.mutable_schedule()->mutable_cosine()->set_alpha(0.1f);
  EXPECT_NEAR(Make(spec).At(50), 0.9 * 0.5 + 0.1, 1e-6);
  EXPECT_NEAR(Make(spec).At(500), 0.1, 1e-6);
}

TEST(ScheduledLearningRateTest, WarmupInFrontOfTheSchedule) {
  OptimizerSpec spec;
  spec.set_learning_rate(1);
  spec.mutable_schedule()->mutable_step()->set_step_size(10);
  spec.mutable_schedule()->set_warmup_steps(4);
  const ScheduledLearningRate lr = Make(spec);
  EXPECT_DOUBLE_EQ(lr.At(0), 0);
  EXPECT_DOUBLE_EQ(lr.At(2), 0.5);
  EXPECT_DOUBLE_EQ(lr.At(4), 1);
  EXPECT_DOUBLE_EQ(lr.At(13), 1);
  EXPECT_NEAR(lr.At(14), 0.1, 1e-7);
}

TEST(ScheduledLearningRateTest, RefusesBadFields) {
  OptimizerSpec spec;
  spec.set_learning_rate(-1);
  auto bad = ScheduledLearningRate::Create(spec);
  EXPECT_NE(bad.status().message().find("optimizer.learning_rate"), std::string::npos);
  spec.set_learning_rate(1);
  spec.mutable_schedule()->mutable_cosine()->set_decay_steps(0);
  EXPECT_FALSE(ScheduledLearningRate::Create(spec).ok());
}

}  // namespace
}  // namespace pstrain
