#include "common/training/update_rule.h"

#include <cmath>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

// Eigen expressions vectorise the per-element rules (plain loops with
// std::sqrt do not, as sqrt may set errno).
using Array = Eigen::Map<Eigen::ArrayXf>;
using ConstArray = Eigen::Map<const Eigen::ArrayXf>;

class Sgd : public UpdateRule {
 public:
  Sgd() : UpdateRule({}, {}) {}
  const char* name() const override { return "sgd"; }
  void Apply(const UpdateContext& c, const float* grad, int64_t n, float* w,
             float* const* /*slots*/) const override {
    Array(w, n) -= (c.learning_rate * c.grad_scale) * ConstArray(grad, n);
  }
};

class Momentum : public UpdateRule {
 public:
  Momentum(float momentum, bool nesterov)
      : UpdateRule({"momentum"}, {0.0f}), m_(momentum), nesterov_(nesterov) {}
  const char* name() const override { return "momentum"; }
  void Apply(const UpdateContext& c, const float* grad, int64_t n, float* w,
             float* const* slots) const override {
    float* a = slots[0];
    for (int64_t i = 0; i < n; ++i) {
      const float g = c.grad_scale * grad[i];
      a[i] = m_ * a[i] + g;
      w[i] -= c.learning_rate * (nesterov_ ? g + m_ * a[i] : a[i]);
    }
  }

 private:
  const float m_;
  const bool nesterov_;
};

class Adagrad : public UpdateRule {
 public:
  Adagrad(float initial_accumulator, float epsilon)
      : UpdateRule({"accumulator"}, {initial_accumulator}), eps_(epsilon) {}
  const char* name() const override { return "adagrad"; }
  void Apply(const UpdateContext& c, const float* grad, int64_t n, float* w,
             float* const* slots) const override {
    const auto g = c.grad_scale * ConstArray(grad, n);
    Array acc(slots[0], n);
    acc += g.square();
    Array(w, n) -= c.learning_rate * g / (acc.sqrt() + eps_);
  }

 private:
  const float eps_;
};

class Adam : public UpdateRule {
 public:
  Adam(float beta1, float beta2, float epsilon)
      : UpdateRule({"m", "v"}, {0.0f, 0.0f}), b1_(beta1), b2_(beta2), eps_(epsilon) {}
  const char* name() const override { return "adam"; }
  void Apply(const UpdateContext& c, const float* grad, int64_t n, float* w,
             float* const* slots) const override {
    const double t = static_cast<double>(c.t < 1 ? 1 : c.t);
    const float lr_t = static_cast<float>(c.learning_rate * std::sqrt(1.0 - std::pow(b2_, t)) /
                                          (1.0 - std::pow(b1_, t)));
    const auto g = c.grad_scale * ConstArray(grad, n);
    Array m(slots[0], n), v(slots[1], n);
    m = b1_ * m + (1 - b1_) * g;
    v = b2_ * v + (1 - b2_) * g.square();
    Array(w, n) -= lr_t * m / (v.sqrt() + eps_);
  }

 private:
  const float b1_, b2_, eps_;
};

class Ftrl : public UpdateRule {
 public:
  Ftrl(float power, float initial_accumulator, float l1, float l2)
      : UpdateRule({"z", "n"}, {0.0f, initial_accumulator}), power_(power), l1_(l1), l2_(l2) {}
  const char* name() const override { return "ftrl"; }
  void Apply(const UpdateContext& c, const float* grad, int64_t n, float* w,
             float* const* slots) const override {
    float* z = slots[0];
    float* acc = slots[1];
    const float lr = c.learning_rate;
    for (int64_t i = 0; i < n; ++i) {
      const float g = c.grad_scale * grad[i];
      const float acc_new = acc[i] + g * g;
      const float p_new = std::pow(acc_new, -power_);
      const float p_old = std::pow(acc[i], -power_);
      z[i] += g - (p_new - p_old) / lr * w[i];
      acc[i] = acc_new;
      w[i] =
          std::abs(z[i]) <= l1_ ? 0.0f : ((z[i] > 0 ? l1_ : -l1_) - z[i]) / (p_new / lr + 2 * l2_);
    }
  }

 private:
  const float power_, l1_, l2_;
};

absl::Status OutOfRange(absl::string_view field, float value, absl::string_view range) {
  return absl::InvalidArgumentError(
      absl::StrCat("optimizer.", field, " must be ", range, ", got ", value));
}

}  // namespace

absl::StatusOr<std::unique_ptr<UpdateRule>> UpdateRule::Create(const OptimizerSpec& spec) {
  switch (spec.kind_case()) {
    case OptimizerSpec::KIND_NOT_SET:
    case OptimizerSpec::kSgd:
      return std::unique_ptr<UpdateRule>(new Sgd());
    case OptimizerSpec::kMomentum: {
      const float m = spec.momentum().has_momentum() ? spec.momentum().momentum() : 0.9f;
      if (!(m >= 0 && m < 1)) return OutOfRange("momentum.momentum", m, "in [0, 1)");
      return std::unique_ptr<UpdateRule>(new Momentum(m, spec.momentum().nesterov()));
    }
    case OptimizerSpec::kAdagrad: {
      const AdagradSpec& a = spec.adagrad();
      const float init = a.has_initial_accumulator() ? a.initial_accumulator() : 0.1f;
      const float eps = a.has_epsilon() ? a.epsilon() : 1e-7f;
      if (!(init > 0)) return OutOfRange("adagrad.initial_accumulator", init, "> 0");
      if (!(eps >= 0)) return OutOfRange("adagrad.epsilon", eps, ">= 0");
      return std::unique_ptr<UpdateRule>(new Adagrad(init, eps));
    }
    case OptimizerSpec::kAdam: {
      const AdamSpec& a = spec.adam();
      const float b1 = a.has_beta1() ? a.beta1() : 0.9f;
      const float b2 = a.has_beta2() ? a.beta2() : 0.999f;
      const float eps = a.has_epsilon() ? a.epsilon() : 1e-8f;
      if (!(b1 >= 0 && b1 < 1)) return OutOfRange("adam.beta1", b1, "in [0, 1)");
      if (!(b2 >= 0 && b2 < 1)) return OutOfRange("adam.beta2", b2, "in [0, 1)");
      if (!(eps > 0)) return OutOfRange("adam.epsilon", eps, "> 0");
      return std::unique_ptr<UpdateRule>(new Adam(b1, b2, eps));
    }
    case OptimizerSpec::kFtrl: {
      const FtrlSpec& f = spec.ftrl();
      const float power = f.has_learning_rate_power() ? f.learning_rate_power() : -0.5f;
      const float init = f.has_initial_accumulator() ? f.initial_accumulator() : 0.1f;
      if (!(power <= 0)) return OutOfRange("ftrl.learning_rate_power", power, "<= 0");
      if (!(init >= 0)) return OutOfRange("ftrl.initial_accumulator", init, ">= 0");
      if (!(f.l1() >= 0)) return OutOfRange("ftrl.l1", f.l1(), ">= 0");
      if (!(f.l2() >= 0)) return OutOfRange("ftrl.l2", f.l2(), ">= 0");
      return std::unique_ptr<UpdateRule>(new Ftrl(power, init, f.l1(), f.l2()));
    }
  }
  return absl::InvalidArgumentError("unknown optimizer kind");
}

}  // namespace pstrain
