#include "common/optimizer/optimizer.h"

#include <algorithm>
#include <cmath>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "common/optimizer/internal/update_kernels.h"

namespace pstrain {
namespace {

// Eigen expressions vectorise the per-element rules (plain loops with
// std::sqrt do not, as sqrt may set errno).
using Array = Eigen::Map<Eigen::ArrayXf>;
using ConstArray = Eigen::Map<const Eigen::ArrayXf>;

// Rules with several arrays run block by block, so that each block of every
// array stays in L1 between the Eigen expressions instead of streaming the
// whole variable through memory once per expression.
constexpr int64_t kBlock = 2048;
// A block-sized temporary on the stack: no allocation per (sparse) row.
using BlockArray = Eigen::Array<float, Eigen::Dynamic, 1, 0, kBlock, 1>;

template <typename Fn>
void ForEachBlock(int64_t n, Fn fn) {
  for (int64_t begin = 0; begin < n; begin += kBlock) fn(begin, std::min(kBlock, n - begin));
}

class Sgd : public Optimizer {
 public:
  Sgd() : Optimizer({}, {}) {}
  const char* name() const override { return "sgd"; }
  void Apply(const UpdateStep& step, const float* grad, int64_t n, float* w,
             float* const* /*slots*/) const override {
    Array(w, n) -= (step.learning_rate * step.grad_scale) * ConstArray(grad, n);
  }
};

class Momentum : public Optimizer {
 public:
  Momentum(float momentum, bool nesterov)
      : Optimizer({"momentum"}, {0.0f}), m_(momentum), nesterov_(nesterov) {}
  const char* name() const override { return "momentum"; }
  void Apply(const UpdateStep& step, const float* grad, int64_t n, float* w,
             float* const* slots) const override {
    const float lr = step.learning_rate, s = step.grad_scale, m = m_;
    ForEachBlock(n, [&](int64_t b, int64_t len) {
      ConstArray g(grad + b, len);
      Array a(slots[0] + b, len), x(w + b, len);
      a = m * a + s * g;
      if (nesterov_) {
        x -= lr * (s * g + m * a);
      } else {
        x -= lr * a;
      }
    });
  }

 private:
  const float m_;
  const bool nesterov_;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(float initial_accumulator, float epsilon)
      : Optimizer({"accumulator"}, {initial_accumulator}), eps_(epsilon) {}
  const char* name() const override { return "adagrad"; }
  void Apply(const UpdateStep& step, const float* grad, int64_t n, float* w,
             float* const* slots) const override {
    optimizer_internal::BestUpdateKernels().adagrad({step.grad_scale, step.learning_rate, eps_},
                                                    grad, n, w, slots[0]);
  }

 private:
  const float eps_;
};

class Adam : public Optimizer {
 public:
  Adam(float beta1, float beta2, float epsilon)
      : Optimizer({"m", "v"}, {0.0f, 0.0f}), b1_(beta1), b2_(beta2), eps_(epsilon) {}
  const char* name() const override { return "adam"; }
  void Apply(const UpdateStep& step, const float* grad, int64_t n, float* w,
             float* const* slots) const override {
    const double t = static_cast<double>(std::max<int64_t>(step.t, 1));
    const float lr_t = static_cast<float>(step.learning_rate *
                                          std::sqrt(1.0 - std::pow(static_cast<double>(b2_), t)) /
                                          (1.0 - std::pow(static_cast<double>(b1_), t)));
    const float s = step.grad_scale;
    optimizer_internal::BestUpdateKernels().adam(
        {b1_, (1 - b1_) * s, b2_, (1 - b2_) * s * s, lr_t, eps_}, grad, n, w, slots[0], slots[1]);
  }

 private:
  const float b1_, b2_, eps_;
};

class Ftrl : public Optimizer {
 public:
  Ftrl(float power, float initial_accumulator, float l1, float l2)
      : Optimizer({"z", "n"}, {0.0f, initial_accumulator}), power_(power), l1_(l1), l2_(l2) {}
  const char* name() const override { return "ftrl"; }
  void Apply(const UpdateStep& step, const float* grad, int64_t n, float* w,
             float* const* slots) const override {
    const float lr = step.learning_rate, s = step.grad_scale, l1 = l1_, l2 = l2_;
    // The rule divides by lr: a step of rate 0 (the first of a warm-up)
    // would turn every weight into NaN. It moves nothing, so skip it.
    if (!(lr > 0)) return;
    const bool sqrt_power = power_ == -0.5f;
    const float neg_p = -power_;
    ForEachBlock(n, [&](int64_t b, int64_t len) {
      ConstArray g(grad + b, len);
      Array z(slots[0] + b, len), acc(slots[1] + b, len), x(w + b, len);
      const BlockArray gs = s * g;
      const BlockArray acc_new = acc + gs.square();
      BlockArray p_new(len), p_old(len);
      if (sqrt_power) {
        p_new = acc_new.sqrt();
        p_old = acc.sqrt();
      } else {
        p_new = acc_new.pow(neg_p);
        p_old = acc.pow(neg_p);
      }
      z += gs - (p_new - p_old) / lr * x;
      acc = acc_new;
      x = (z.abs() <= l1)
              .select(BlockArray::Zero(len), (z.sign() * l1 - z) / (p_new / lr + 2 * l2));
    });
  }

 private:
  const float power_, l1_, l2_;
};

absl::Status InRange(const char* field, float value, float low, bool low_open, float high,
                     bool high_open) {
  const bool ok = std::isfinite(value) && (low_open ? value > low : value >= low) &&
                  (high_open ? value < high : value <= high);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be in ", low_open ? "(" : "[", low,
                                                 ", ", high, high_open ? ")" : "]", ", got ",
                                                 value));
}

}  // namespace

void Optimizer::InitializeRowSlots(int64_t width, float* row) const {
  for (int k = 0; k < num_slots(); ++k) {
    std::fill(row + (k + 1) * width, row + (k + 2) * width, slot_initial_values_[k]);
  }
}

void Optimizer::ApplyToRow(const UpdateStep& step, const float* grad, int64_t width,
                           float* row) const {
  float* slots[kMaxSlots];
  for (int k = 0; k < num_slots(); ++k) slots[k] = row + (k + 1) * width;
  Apply(step, grad, width, row, slots);
}

absl::StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(const OptimizerSpec& spec) {
  constexpr float kInf = INFINITY;
  switch (spec.kind_case()) {
    case OptimizerSpec::KIND_NOT_SET:
    case OptimizerSpec::kSgd:
      return std::unique_ptr<Optimizer>(new Sgd());
    case OptimizerSpec::kMomentum: {
      const float m = spec.momentum().has_momentum() ? spec.momentum().momentum() : 0.9f;
      absl::Status s = InRange("optimizer.momentum.momentum", m, 0, false, 1, true);
      if (!s.ok()) return s;
      return std::unique_ptr<Optimizer>(new Momentum(m, spec.momentum().nesterov()));
    }
    case OptimizerSpec::kAdagrad: {
      const AdagradSpec& a = spec.adagrad();
      const float init = a.has_initial_accumulator() ? a.initial_accumulator() : 0.1f;
      const float eps = a.has_epsilon() ? a.epsilon() : 1e-7f;
      absl::Status s = InRange("optimizer.adagrad.initial_accumulator", init, 0, true, kInf, true);
      if (s.ok()) s = InRange("optimizer.adagrad.epsilon", eps, 0, false, kInf, true);
      if (!s.ok()) return s;
      return std::unique_ptr<Optimizer>(new Adagrad(init, eps));
    }
    case OptimizerSpec::kAdam: {
      const AdamSpec& a = spec.adam();
      const float b1 = a.has_beta1() ? a.beta1() : 0.9f;
      const float b2 = a.has_beta2() ? a.beta2() : 0.999f;
      const float eps = a.has_epsilon() ? a.epsilon() : 1e-8f;
      absl::Status s = InRange("optimizer.adam.beta1", b1, 0, false, 1, true);
      if (s.ok()) s = InRange("optimizer.adam.beta2", b2, 0, false, 1, true);
      if (s.ok()) s = InRange("optimizer.adam.epsilon", eps, 0, true, kInf, true);
      if (!s.ok()) return s;
      return std::unique_ptr<Optimizer>(new Adam(b1, b2, eps));
    }
    case OptimizerSpec::kFtrl: {
      const FtrlSpec& f = spec.ftrl();
      const float power = f.has_learning_rate_power() ? f.learning_rate_power() : -0.5f;
      const float init = f.has_initial_accumulator() ? f.initial_accumulator() : 0.1f;
      absl::Status s = InRange("optimizer.ftrl.learning_rate_power", power, -kInf, true, 0, false);
      if (s.ok()) s = InRange("optimizer.ftrl.initial_accumulator", init, 0, false, kInf, true);
      if (s.ok()) s = InRange("optimizer.ftrl.l1", f.l1(), 0, false, kInf, true);
      if (s.ok()) s = InRange("optimizer.ftrl.l2", f.l2(), 0, false, kInf, true);
      if (!s.ok()) return s;
      // n^-p with n = 0 and p < 0 is fine (0); with p = 0 it is 1.
      return std::unique_ptr<Optimizer>(new Ftrl(power, init, f.l1(), f.l2()));
    }
  }
  return absl::InvalidArgumentError("optimizer: unknown kind");
}

}  // namespace pstrain
