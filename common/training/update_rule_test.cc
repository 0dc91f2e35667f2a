#include "common/training/update_rule.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

std::unique_ptr<UpdateRule> Make(const OptimizerSpec& spec) {
  auto rule = UpdateRule::Create(spec);
  EXPECT_TRUE(rule.ok()) << rule.status();
  return std::move(rule).value();
}

// Runs `steps` updates of one element from w0 with gradient g(w) = 2 (w - 3),
// the gradient of (w - 3)^2, and returns w.
float Minimise(const UpdateRule& rule, float lr, int steps) {
  float w = 0;
  std::vector<float> slots(rule.num_slots());
  for (int k = 0; k < rule.num_slots(); ++k) slots[k] = rule.slot_initial_value(k);
  std::vector<float*> slot_ptrs;
  for (float& s : slots) slot_ptrs.push_back(&s);
  for (int t = 1; t <= steps; ++t) {
    const float g = 2 * (w - 3);
    UpdateContext c;
    c.learning_rate = lr;
    c.t = t;
    rule.Apply(c, &g, 1, &w, slot_ptrs.data());
  }
  return w;
}

TEST(UpdateRuleTest, OneStepByHand) {
  OptimizerSpec spec;
  const float g = 0.5f;
  UpdateContext c;
  c.learning_rate = 0.1f;
  c.t = 1;
  {
    float w = 1;
    Make(spec)->Apply(c, &g, 1, &w, nullptr);
    EXPECT_FLOAT_EQ(w, 1 - 0.05f);
  }
  {
    spec.mutable_momentum()->set_momentum(0.5f);
    float w = 1, a = 2;
    float* slots[] = {&a};
    Make(spec)->Apply(c, &g, 1, &w, slots);
    EXPECT_FLOAT_EQ(a, 1.5f);
    EXPECT_FLOAT_EQ(w, 1 - 0.15f);
  }
  {
    spec.mutable_adagrad();
    float w = 1, acc = 0.1f;
    float* slots[] = {&acc};
    Make(spec)->Apply(c, &g, 1, &w, slots);
    EXPECT_FLOAT_EQ(acc, 0.35f);
    EXPECT_NEAR(w, 1 - 0.1f * 0.5f / (std::sqrt(0.35f) + 1e-7f), 1e-6);
  }
  {
    spec.mutable_adam();
    float w = 1, m = 0, v = 0;
    float* slots[] = {&m, &v};
    Make(spec)->Apply(c, &g, 1, &w, slots);
    // At t = 1 the bias-corrected step is lr * sign(g) (up to epsilon).
    EXPECT_NEAR(w, 0.9f, 1e-6);
  }
  {
    spec.mutable_ftrl()->set_l1(0.01f);
    float w = 0, z = 0, n = 0.1f;
    float* slots[] = {&z, &n};
    Make(spec)->Apply(c, &g, 1, &w, slots);
    EXPECT_FLOAT_EQ(n, 0.35f);
    EXPECT_FLOAT_EQ(z, 0.5f);
    EXPECT_NEAR(w, (0.01f - 0.5f) / (std::sqrt(0.35f) / 0.1f), 1e-6);
  }
  {
    spec.mutable_sgd();
    c.grad_scale = 0.5f;
    float w = 1;
    Make(spec)->Apply(c, &g, 1, &w, nullptr);
    EXPECT_FLOAT_EQ(w, 1 - 0.025f);
  }
}

TEST(UpdateRuleTest, EveryRuleMinimisesAQuadratic) {
  std::vector<std::pair<OptimizerSpec, float>> cases(6);
  cases[0].second = 0.1f;
  cases[1].first.mutable_momentum();
  cases[1].second = 0.05f;
  cases[2].first.mutable_momentum()->set_nesterov(true);
  cases[2].second = 0.05f;
  cases[3].first.mutable_adagrad();
  cases[3].second = 1.0f;
  cases[4].first.mutable_adam();
  cases[4].second = 0.1f;
  cases[5].first.mutable_ftrl();
  cases[5].second = 1.0f;
  for (const auto& [spec, lr] : cases) {
    auto rule = Make(spec);
    EXPECT_NEAR(Minimise(*rule, lr, 500), 3.0f, 0.02f) << rule->name();
  }
}

TEST(UpdateRuleTest, RefusesOutOfRangeFields) {
  OptimizerSpec spec;
  spec.mutable_momentum()->set_momentum(1.0f);
  EXPECT_EQ(UpdateRule::Create(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec.mutable_adam()->set_epsilon(0);
  auto bad = UpdateRule::Create(spec);
  EXPECT_NE(bad.status().message().find("optimizer.adam.epsilon"), std::string::npos);
  spec.mutable_ftrl()->set_l1(-1);
  EXPECT_FALSE(UpdateRule::Create(spec).ok());
}

}  // namespace
}  // namespace pstrain
