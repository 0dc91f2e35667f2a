#ifndef PSTRAIN_COMMON_OPTIMIZER_OPTIMIZER_H_
#define PSTRAIN_COMMON_OPTIMIZER_OPTIMIZER_H_

// The update rules every trainer applies: the parameter-server shards and
// the single-process trainer (the correctness oracle of the distributed
// system) run this very code, so the same gradients give the same values.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protos/job.pb.h"

namespace pstrain {

// What one update needs besides the arrays.
struct UpdateStep {
  float learning_rate = 0.01f;
  // The 1-based number of this update (Adam's bias correction).
  int64_t t = 1;
  // Multiplies every gradient element first: clipping (GradientClipScale)
  // and the 1/R of a sync round's mean, folded into the single pass over the
  // data.
  float grad_scale = 1.0f;
};

// An optimizer's per-element update rule. Immutable after Create and
// thread-safe; callers serialise updates of the same elements.
//
// Each rule is written as TensorFlow's training ops define it, with g the
// scaled gradient and lr the step's learning rate:
//   SGD       w -= lr g
//   Momentum  a = m a + g;  w -= lr a            (Nesterov: w -= lr (g + m a))
//   Adagrad   acc += g^2;   w -= lr g / (sqrt(acc) + eps)
//   Adam      m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//             w -= lr sqrt(1-b2^t) / (1-b1^t) * m / (sqrt(v) + eps)
//   FTRL      n' = n + g^2;  z += g - (n'^-p - n^-p) / lr * w;  n = n';
//             w = |z| <= l1 ? 0 : (sign(z) l1 - z) / (n'^-p / lr + 2 l2)
//             with p = learning_rate_power (default -0.5). An update with
//             lr = 0 (the first step of a warm-up) changes nothing.
// Slots (per-element optimizer state) are held by the caller: arrays shaped
// like a dense variable, or per row of an embedding table. A table is
// updated only in the rows of its gradient (lazily, as TensorFlow's sparse
// ops do): see ApplyToRow.
class Optimizer {
 public:
  // `spec` as a job gives it, or from any client: its defaults are filled
  // and its rules checked by PrepareOptimizerSpec (common/config), as at
  // submit. InvalidArgument listing every field out of its range (momentum
  // outside [0, 1), epsilon <= 0, l1 < 0, learning_rate <= 0, ...) or not
  // finite.
  static absl::StatusOr<std::unique_ptr<Optimizer>> Create(const OptimizerSpec& spec);

  virtual ~Optimizer() = default;

  // "sgd", "momentum", "adagrad", "adam" or "ftrl".
  virtual const char* name() const = 0;
  // At most kMaxSlots.
  int num_slots() const { return static_cast<int>(slot_names_.size()); }
  const std::vector<std::string>& slot_names() const { return slot_names_; }
  // The value every element of slot `k` starts from.
  float slot_initial_value(int k) const { return slot_initial_values_[k]; }

  // Updates w[0, n) and slots[k][0, n) for each slot k from grad[0, n).
  // The arrays must not overlap one another.
  virtual void Apply(const UpdateStep& step, const float* grad, int64_t n, float* w,
                     float* const* slots) const = 0;

  // A row stored with its slots: `width` values, then `width` floats of
  // each slot, row_floats(width) in all.
  int64_t row_floats(int64_t width) const { return width * (1 + num_slots()); }
  // Fills the slots of such a row (after its `width` values) with their
  // initial values.
  void InitializeRowSlots(int64_t width, float* row) const;
  // Updates such a row from `grad` (`width` floats): one row of a sparse
  // update.
  void ApplyToRow(const UpdateStep& step, const float* grad, int64_t width, float* row) const;

  static constexpr int kMaxSlots = 2;

 protected:
  Optimizer(std::vector<std::string> slot_names, std::vector<float> slot_initial_values)
      : slot_names_(std::move(slot_names)), slot_initial_values_(std::move(slot_initial_values)) {}

 private:
  const std::vector<std::string> slot_names_;
  const std::vector<float> slot_initial_values_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_OPTIMIZER_OPTIMIZER_H_
