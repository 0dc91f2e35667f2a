#ifndef PSTRAIN_COMMON_MODEL_LAYERS_DROPOUT_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_DROPOUT_H_

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "common/config/pass_mode.h"

namespace pstrain {

// Inverted dropout: in training each element is zeroed with probability
// `rate` and the survivors are scaled by 1 / (1 - rate), so evaluation (where
// it is the identity) needs no rescaling. The masks come from a generator
// seeded at construction, so a run is reproducible. Thread-compatible.
class Dropout {
 public:
  // `rate` in [0, 1).
  Dropout(float rate, uint64_t seed);

  // y = x * mask in PassMode::kTrain (drawing a new mask), y = x in kEval.
  // `y` may equal `x`. InvalidArgument: size < 0.
  absl::Status Forward(int64_t size, const float* x, float* y, PassMode mode);

  // dx = dy * mask of the last training Forward (of the same size).
  // FailedPrecondition: no training Forward of that size came first.
  absl::Status Backward(int64_t size, const float* dy, float* dx) const;

  float rate() const { return rate_; }

 private:
  const float rate_;
  std::mt19937_64 rng_;
  std::vector<float> mask_;  // 0 or 1 / (1 - rate) per element
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_DROPOUT_H_
