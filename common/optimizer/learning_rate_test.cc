#include "common/optimizer/learning_rate.h"

#include <cmath>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

LearningRate Make(const OptimizerSpec& spec) {
  absl::StatusOr<LearningRate> lr = LearningRate::Create(spec);
  EXPECT_TRUE(lr.ok()) << lr.status();
  return *lr;
}

TEST(LearningRateTest, ConstantDefaultsToOneHundredth) {
  EXPECT_FLOAT_EQ(Make(OptimizerSpec()).At(0), 0.01f);
  OptimizerSpec s;
  s.set_learning_rate(0.5f);
  EXPECT_FLOAT_EQ(Make(s).At(1000000), 0.5f);
}

TEST(LearningRateTest, StepDecay) {
  OptimizerSpec s;
  s.set_learning_rate(1.0f);
  s.mutable_schedule()->mutable_step()->set_step_size(10);
  s.mutable_schedule()->mutable_step()->set_factor(0.5f);
  const LearningRate lr = Make(s);
  EXPECT_FLOAT_EQ(lr.At(9), 1.0f);
  EXPECT_FLOAT_EQ(lr.At(10), 0.5f);
  EXPECT_FLOAT_EQ(lr.At(25), 0.25f);
}

TEST(LearningRateTest, ExponentialDecaySmoothAndStaircase) {
  OptimizerSpec s;
  s.set_learning_rate(2.0f);
  s.mutable_schedule()->mutable_exponential()->set_decay_steps(100);
  s.mutable_schedule()->mutable_exponential()->set_rate(0.5f);
  EXPECT_FLOAT_EQ(Make(s).At(150), 2.0f * std::pow(0.5f, 1.5f));
  s.mutable_schedule()->mutable_exponential()->set_staircase(true);
  EXPECT_FLOAT_EQ(Make(s).At(150), 1.0f);
}

TEST(LearningRateTest, CosineDecayEndsAtAlpha) {
  OptimizerSpec s;
  s.set_learning_rate(1.0f);
  s.mutable_schedule()->mutable_cosine()->set_decay_steps(100);
  s.mutable_schedule()->mutable_cosine()->set_alpha(0.1f);
  const LearningRate lr = Make(s);
  EXPECT_FLOAT_EQ(lr.At(0), 1.0f);
  EXPECT_NEAR(lr.At(50), 0.9f * 0.5f + 0.1f, 1e-6);
  EXPECT_NEAR(lr.At(100), 0.1f, 1e-6);
  EXPECT_NEAR(lr.At(1000), 0.1f, 1e-6);
}

TEST(LearningRateTest, WarmupRampsThenRunsTheSchedule) {
  OptimizerSpec s;
  s.set_learning_rate(1.0f);
  s.mutable_schedule()->set_warmup_steps(4);
  s.mutable_schedule()->mutable_step()->set_step_size(10);
  s.mutable_schedule()->mutable_step()->set_factor(0.5f);
  const LearningRate lr = Make(s);
  EXPECT_FLOAT_EQ(lr.At(0), 0.0f);
  EXPECT_FLOAT_EQ(lr.At(1), 0.25f);
  EXPECT_FLOAT_EQ(lr.At(4), 1.0f);
  EXPECT_FLOAT_EQ(lr.At(13), 1.0f);
  EXPECT_FLOAT_EQ(lr.At(14), 0.5f);
}

TEST(LearningRateTest, RefusesBadSpecsNamingTheField) {
  OptimizerSpec s;
  s.set_learning_rate(-1);
  EXPECT_EQ(LearningRate::Create(s).status().code(), absl::StatusCode::kInvalidArgument);
  OptimizerSpec d;
  d.mutable_schedule()->mutable_step();
  absl::Status st = LearningRate::Create(d).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("step_size"), std::string::npos);
  OptimizerSpec c;
  c.mutable_schedule()->mutable_cosine()->set_decay_steps(5);
  c.mutable_schedule()->mutable_cosine()->set_alpha(2);
  EXPECT_EQ(LearningRate::Create(c).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LearningRateTest, ConstantAndDefault) {
  OptimizerSpec spec;
  EXPECT_NEAR(Make(spec).At(1000), 0.01, 1e-9);
  spec.set_learning_rate(0.5f);
  EXPECT_DOUBLE_EQ(Make(spec).At(0), 0.5);
}

TEST(LearningRateTest, Decays) {
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

TEST(LearningRateTest, WarmupInFrontOfTheSchedule) {
  OptimizerSpec spec;
  spec.set_learning_rate(1);
  spec.mutable_schedule()->mutable_step()->set_step_size(10);
  spec.mutable_schedule()->set_warmup_steps(4);
  const LearningRate lr = Make(spec);
  EXPECT_DOUBLE_EQ(lr.At(0), 0);
  EXPECT_DOUBLE_EQ(lr.At(2), 0.5);
  EXPECT_DOUBLE_EQ(lr.At(4), 1);
  EXPECT_DOUBLE_EQ(lr.At(13), 1);
  EXPECT_NEAR(lr.At(14), 0.1, 1e-7);
}

TEST(LearningRateTest, RefusesBadFields) {
  OptimizerSpec spec;
  spec.set_learning_rate(-1);
  auto bad = LearningRate::Create(spec);
  EXPECT_NE(bad.status().message().find("optimizer.learning_rate"), std::string::npos);
  spec.set_learning_rate(1);
  spec.mutable_schedule()->mutable_cosine()->set_decay_steps(0);
  EXPECT_FALSE(LearningRate::Create(spec).ok());
}

}  // namespace
}  // namespace pstrain
