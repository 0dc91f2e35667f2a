#include "common/optimizer/optimizer.h"

#include <algorithm>
#include <cmath>

#include "Eigen/Core"
#include "common/config/job_spec.h"
#include "common/optimizer/internal/update_kernels.h"
#include "common/status/status_macros.h"

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

absl::StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(const OptimizerSpec& raw) {
  ASSIGN_OR_RETURN(const OptimizerSpec spec, PrepareOptimizerSpec(raw));
  switch (spec.kind_case()) {
    case OptimizerSpec::kMomentum:
      return std::unique_ptr<Optimizer>(
          new Momentum(spec.momentum().momentum(), spec.momentum().nesterov()));
    case OptimizerSpec::kAdagrad:
      return std::unique_ptr<Optimizer>(
          new Adagrad(spec.adagrad().initial_accumulator(), spec.adagrad().epsilon()));
    case OptimizerSpec::kAdam:
      return std::unique_ptr<Optimizer>(
          new Adam(spec.adam().beta1(), spec.adam().beta2(), spec.adam().epsilon()));
    case OptimizerSpec::kFtrl: {
      const FtrlSpec& f = spec.ftrl();
      // n^-p with n = 0 and p < 0 is fine (0); with p = 0 it is 1.
      return std::unique_ptr<Optimizer>(
          new Ftrl(f.learning_rate_power(), f.initial_accumulator(), f.l1(), f.l2()));
    }
    case OptimizerSpec::kSgd:
    case OptimizerSpec::KIND_NOT_SET:  // filled as sgd
      break;
  }
  return std::unique_ptr<Optimizer>(new Sgd());
}

}  // namespace pstrain
