#include "common/optimizer/optimizer.h"

#include <cmath>
#include <functional>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

std::unique_ptr<Optimizer> Make(const OptimizerSpec& spec) {
  absl::StatusOr<std::unique_ptr<Optimizer>> opt = Optimizer::Create(spec);
  EXPECT_TRUE(opt.ok()) << opt.status();
  return std::move(opt).value();
}

// A variable and its slots, updated by `opt`.
struct State {
  State(const Optimizer& opt, std::vector<float> w0) : w(std::move(w0)) {
    for (int k = 0; k < opt.num_slots(); ++k) {
      slots.emplace_back(w.size(), opt.slot_initial_value(k));
    }
  }
  void Apply(const Optimizer& opt, const UpdateStep& step, const std::vector<float>& g) {
    std::vector<float*> ptrs;
    for (auto& s : slots) ptrs.push_back(s.data());
    opt.Apply(step, g.data(), static_cast<int64_t>(g.size()), w.data(), ptrs.data());
  }
  std::vector<float> w;
  std::vector<std::vector<float>> slots;
};

TEST(OptimizerTest, SgdHandValues) {
  auto opt = Make(OptimizerSpec());
  EXPECT_EQ(opt->num_slots(), 0);
  State s(*opt, {1.0f, -2.0f});
  s.Apply(*opt, {0.1f, 1, 1.0f}, {0.5f, -1.0f});
  EXPECT_FLOAT_EQ(s.w[0], 0.95f);
  EXPECT_FLOAT_EQ(s.w[1], -1.9f);
  // grad_scale multiplies the gradient.
  s.Apply(*opt, {0.1f, 2, 0.5f}, {1.0f, 1.0f});
  EXPECT_FLOAT_EQ(s.w[0], 0.90f);
}

TEST(OptimizerTest, FtrlHandValues) {
  OptimizerSpec spec;
  spec.mutable_ftrl();
  auto opt = Make(spec);
  State s(*opt, {0.0f});
  s.Apply(*opt, {0.1f, 1, 1.0f}, {1.0f});
  // n' = 0.1 + 1, z = 1, w = -z / (sqrt(1.1) / 0.1)
  EXPECT_NEAR(s.w[0], -0.1 / std::sqrt(1.1), 1e-6);
  spec.mutable_ftrl()->set_l1(2.0f);
  auto l1 = Make(spec);
  State t(*l1, {0.0f});
  t.Apply(*l1, {0.1f, 1, 1.0f}, {1.0f});
  EXPECT_EQ(t.w[0], 0.0f);  // |z| = 1 <= l1
}

// Warm-up starts at a learning rate of 0; FTRL divides by it.
TEST(OptimizerTest, FtrlStepAtLearningRateZeroChangesNothing) {
  OptimizerSpec spec;
  spec.mutable_ftrl()->set_learning_rate_power(-0.3f);
  auto opt = Make(spec);
  State s(*opt, {0.5f, -0.25f});
  s.Apply(*opt, {0.0f, 1, 1.0f}, {1.0f, -2.0f});
  EXPECT_EQ(s.w, (std::vector<float>{0.5f, -0.25f}));
  EXPECT_EQ(s.slots[0], (std::vector<float>{0.0f, 0.0f}));
  EXPECT_EQ(s.slots[1], (std::vector<float>{0.1f, 0.1f}));
  s.Apply(*opt, {0.1f, 2, 1.0f}, {1.0f, -2.0f});
  EXPECT_TRUE(std::isfinite(s.w[0]) && std::isfinite(s.w[1]));
}

TEST(OptimizerTest, AdamFirstStepMovesByTheLearningRate) {
  OptimizerSpec spec;
  spec.mutable_adam();
  auto opt = Make(spec);
  State s(*opt, {1.0f, 1.0f});
  s.Apply(*opt, {0.01f, 1, 1.0f}, {3.0f, -0.2f});
  // Bias-corrected, the first step is lr * g / |g|.
  EXPECT_NEAR(s.w[0], 0.99f, 1e-6);
  EXPECT_NEAR(s.w[1], 1.01f, 1e-6);
}

// Reference implementations in double, one element at a time, checked
// against the vectorised rules over several steps and more than one block.
struct Reference {
  OptimizerSpec spec;
  std::function<void(double& w, std::vector<double>& slot, double g, double lr, int t)> step;
  std::vector<double> slot0;
};

std::vector<Reference> References() {
  std::vector<Reference> refs;
  {
    Reference r;
    r.spec.mutable_sgd();
    r.step = [](double& w, std::vector<double>&, double g, double lr, int) { w -= lr * g; };
    refs.push_back(r);
  }
  for (bool nesterov : {false, true}) {
    Reference r;
    r.spec.mutable_momentum()->set_momentum(0.8f);
    r.spec.mutable_momentum()->set_nesterov(nesterov);
    r.slot0 = {0};
    r.step = [nesterov](double& w, std::vector<double>& s, double g, double lr, int) {
      s[0] = 0.8 * s[0] + g;
      w -= nesterov ? lr * (g + 0.8 * s[0]) : lr * s[0];
    };
    refs.push_back(r);
  }
  {
    Reference r;
    r.spec.mutable_adagrad()->set_initial_accumulator(0.5f);
    r.spec.mutable_adagrad()->set_epsilon(1e-3f);
    r.slot0 = {0.5};
    r.step = [](double& w, std::vector<double>& s, double g, double lr, int) {
      s[0] += g * g;
      w -= lr * g / (std::sqrt(s[0]) + 1e-3);
    };
    refs.push_back(r);
  }
  {
    Reference r;
    r.spec.mutable_adam()->set_beta1(0.8f);
    r.spec.mutable_adam()->set_beta2(0.9f);
    r.spec.mutable_adam()->set_epsilon(1e-4f);
    r.slot0 = {0, 0};
    r.step = [](double& w, std::vector<double>& s, double g, double lr, int t) {
      s[0] = 0.8 * s[0] + 0.2 * g;
      s[1] = 0.9 * s[1] + 0.1 * g * g;
      w -= lr * std::sqrt(1 - std::pow(0.9, t)) / (1 - std::pow(0.8, t)) * s[0] /
           (std::sqrt(s[1]) + 1e-4);
    };
    refs.push_back(r);
  }
  for (float power : {-0.5f, -0.3f}) {
    Reference r;
    r.spec.mutable_ftrl()->set_learning_rate_power(power);
    r.spec.mutable_ftrl()->set_initial_accumulator(0.2f);
    r.spec.mutable_ftrl()->set_l1(0.01f);
    r.spec.mutable_ftrl()->set_l2(0.5f);
    r.slot0 = {0, 0.2};
    r.step = [power](double& w, std::vector<double>& s, double g, double lr, int) {
      const double p = -power;
      const double n_new = s[1] + g * g;
      s[0] += g - (std::pow(n_new, p) - std::pow(s[1], p)) / lr * w;
      s[1] = n_new;
      w = std::abs(s[0]) <= 0.01
              ? 0.0
              : ((s[0] > 0 ? 1 : -1) * 0.01 - s[0]) / (std::pow(n_new, p) / lr + 2 * 0.5);
    };
    refs.push_back(r);
  }
  return refs;
}

TEST(OptimizerTest, EveryRuleMatchesItsReferenceOverSeveralSteps) {
  constexpr int kN = 5000;  // more than two blocks
  for (const Reference& ref : References()) {
    SCOPED_TRACE(ref.spec.ShortDebugString());
    auto opt = Make(ref.spec);
    ASSERT_EQ(opt->num_slots(), static_cast<int>(ref.slot0.size()));
    std::vector<float> w0(kN);
    for (int i = 0; i < kN; ++i) w0[i] = 0.1f * (i % 7) - 0.3f;
    State s(*opt, w0);
    std::vector<double> w(w0.begin(), w0.end());
    std::vector<std::vector<double>> slots(kN, ref.slot0);
    for (int t = 1; t <= 4; ++t) {
      std::vector<float> g(kN);
      for (int i = 0; i < kN; ++i) g[i] = 0.05f * ((i + t) % 5) - 0.1f;
      const float lr = 0.1f / t, scale = t == 3 ? 0.5f : 1.0f;
      s.Apply(*opt, {lr, t, scale}, g);
      for (int i = 0; i < kN; ++i) ref.step(w[i], slots[i], scale * g[i], lr, t);
    }
    for (int i = 0; i < kN; ++i) {
      ASSERT_NEAR(s.w[i], w[i], 1e-5 * (1 + std::abs(w[i]))) << "element " << i;
      for (size_t k = 0; k < ref.slot0.size(); ++k) {
        ASSERT_NEAR(s.slots[k][i], slots[i][k], 1e-5 * (1 + std::abs(slots[i][k])))
            << "slot " << k << " element " << i;
      }
    }
  }
}

TEST(OptimizerTest, RefusesOutOfRangeHyperparameters) {
  OptimizerSpec m;
  m.mutable_momentum()->set_momentum(1.0f);
  EXPECT_EQ(Optimizer::Create(m).status().code(), absl::StatusCode::kInvalidArgument);
  OptimizerSpec a;
  a.mutable_adam()->set_epsilon(0.0f);
  EXPECT_EQ(Optimizer::Create(a).status().code(), absl::StatusCode::kInvalidArgument);
  OptimizerSpec f;
  f.mutable_ftrl()->set_l1(-1.0f);
  absl::Status st = Optimizer::Create(f).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("optimizer.ftrl.l1"), std::string::npos);
  OptimizerSpec g;
  g.mutable_adagrad()->set_initial_accumulator(0.0f);
  EXPECT_EQ(Optimizer::Create(g).status().code(), absl::StatusCode::kInvalidArgument);
}

// Closed-form checks and convergence, one element at a time.

// Runs `steps` updates of one element from w0 with gradient g(w) = 2 (w - 3),
// the gradient of (w - 3)^2, and returns w.
float Minimise(const Optimizer& rule, float lr, int steps) {
  float w = 0;
  std::vector<float> slots(rule.num_slots());
  for (int k = 0; k < rule.num_slots(); ++k) slots[k] = rule.slot_initial_value(k);
  std::vector<float*> slot_ptrs;
  for (float& s : slots) slot_ptrs.push_back(&s);
  for (int t = 1; t <= steps; ++t) {
    const float g = 2 * (w - 3);
    UpdateStep c;
    c.learning_rate = lr;
    c.t = t;
    rule.Apply(c, &g, 1, &w, slot_ptrs.data());
  }
  return w;
}

TEST(OptimizerTest, OneStepByHand) {
  OptimizerSpec spec;
  const float g = 0.5f;
  UpdateStep c;
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

TEST(OptimizerTest, EveryRuleMinimisesAQuadratic) {
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

TEST(OptimizerTest, RefusesOutOfRangeFieldsNamingThem) {
  OptimizerSpec spec;
  spec.mutable_momentum()->set_momentum(1.0f);
  EXPECT_EQ(Optimizer::Create(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec.mutable_adam()->set_epsilon(0);
  auto bad = Optimizer::Create(spec);
  EXPECT_NE(bad.status().message().find("optimizer.adam.epsilon"), std::string::npos);
  spec.mutable_ftrl()->set_l1(-1);
  EXPECT_FALSE(Optimizer::Create(spec).ok());
}

// A sparse row (value and slots side by side) takes the same update as the
// same elements held in separate arrays.
TEST(OptimizerTest, RowsWithTheirSlotsUpdateLikeSeparateArrays) {
  for (const Reference& ref : References()) {
    SCOPED_TRACE(ref.spec.ShortDebugString());
    auto opt = Make(ref.spec);
    constexpr int64_t kWidth = 13;
    std::vector<float> w0(kWidth), g(kWidth);
    for (int i = 0; i < kWidth; ++i) {
      w0[i] = 0.2f * (i % 4) - 0.3f;
      g[i] = 0.07f * (i % 5) - 0.1f;
    }
    State separate(*opt, w0);
    std::vector<float> row(opt->row_floats(kWidth), -1.0f);
    std::copy(w0.begin(), w0.end(), row.begin());
    opt->InitializeRowSlots(kWidth, row.data());
    for (int k = 0; k < opt->num_slots(); ++k) {
      ASSERT_EQ(row[(k + 1) * kWidth], opt->slot_initial_value(k));
    }
    for (int t = 1; t <= 3; ++t) {
      const UpdateStep step{0.05f, t, 0.5f};
      separate.Apply(*opt, step, g);
      opt->ApplyToRow(step, g.data(), kWidth, row.data());
    }
    std::vector<float> expected = separate.w;
    for (const auto& s : separate.slots) expected.insert(expected.end(), s.begin(), s.end());
    EXPECT_EQ(row, expected);
  }
}

}  // namespace
}  // namespace pstrain
