#ifndef PSTRAIN_COMMON_TRAINING_UPDATE_RULE_H_
#define PSTRAIN_COMMON_TRAINING_UPDATE_RULE_H_

// The optimizers of the single-process trainer: an in-process copy of the
// update rules the parameter servers apply, so that a local run is an
// oracle for a distributed one.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protos/job.pb.h"

namespace pstrain {

// What one update needs besides the arrays.
struct UpdateContext {
  float learning_rate = 0.01f;
  // The 1-based number of this update (Adam's bias correction).
  int64_t t = 1;
  // Multiplies every gradient element first (gradient clipping).
  float grad_scale = 1.0f;
};

// An optimizer's per-element update rule, as TensorFlow's training ops
// define it, with g the scaled gradient and lr the step's learning rate:
//   SGD       w -= lr g
//   Momentum  a = m a + g;  w -= lr a            (Nesterov: w -= lr (g + m a))
//   Adagrad   acc += g^2;   w -= lr g / (sqrt(acc) + eps)
//   Adam      m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//             w -= lr sqrt(1-b2^t) / (1-b1^t) * m / (sqrt(v) + eps)
//   FTRL      n' = n + g^2;  z += g - (n'^-p - n^-p) / lr * w;  n = n';
//             w = |z| <= l1 ? 0 : (sign(z) l1 - z) / (n'^-p / lr + 2 l2)
// Slots (per-element optimizer state) are held by the caller: shaped like a
// dense variable, or per row of an embedding table, which is updated only
// for the rows in its gradient (lazily, as TensorFlow's sparse ops do).
// Immutable and thread-safe.
class UpdateRule {
 public:
  // Unset optional fields take their documented defaults. InvalidArgument
  // naming the field for a value outside its range (momentum outside
  // [0, 1), epsilon <= 0, l1 < 0, ...).
  static absl::StatusOr<std::unique_ptr<UpdateRule>> Create(const OptimizerSpec& spec);

  virtual ~UpdateRule() = default;

  // "sgd", "momentum", "adagrad", "adam" or "ftrl".
  virtual const char* name() const = 0;
  int num_slots() const { return static_cast<int>(slot_names_.size()); }
  const std::vector<std::string>& slot_names() const { return slot_names_; }
  // The value every element of slot `k` starts from.
  float slot_initial_value(int k) const { return slot_initial_values_[k]; }

  // Updates w[0, n) and slots[k][0, n) for each slot k from grad[0, n).
  virtual void Apply(const UpdateContext& context, const float* grad, int64_t n, float* w,
                     float* const* slots) const = 0;

 protected:
  UpdateRule(std::vector<std::string> slot_names, std::vector<float> slot_initial_values)
      : slot_names_(std::move(slot_names)), slot_initial_values_(std::move(slot_initial_values)) {}

 private:
  const std::vector<std::string> slot_names_;
  const std::vector<float> slot_initial_values_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TRAINING_UPDATE_RULE_H_
