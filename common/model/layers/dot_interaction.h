#ifndef PSTRAIN_COMMON_MODEL_LAYERS_DOT_INTERACTION_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_DOT_INTERACTION_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace pstrain {

// DLRM's dot interaction (Naumov et al. 2019): of n vectors of dim d per
// example, x [batch, n, d], the output [batch, d + n (n - 1) / 2] is the
// first vector (the bottom MLP's output) followed by the dot product of
// every pair i > j, no vector with itself, in the reference's order: row i
// of the lower triangle of X X^T, then the next row. No variables; a plain
// loop (the products cost far less than the MLPs around them). Holds no
// state between calls: thread-safe.
class DotInteraction {
 public:
  // n >= 2, d >= 1 (checked by the caller's spec validation).
  DotInteraction(int64_t num_vectors, int64_t dim);

  int64_t num_vectors() const { return num_vectors_; }
  int64_t dim() const { return dim_; }
  int64_t output_dim() const { return dim_ + static_cast<int64_t>(pairs_.size()); }
  // The pairs (i, j), i > j, in output order.
  const std::vector<std::pair<int64_t, int64_t>>& pairs() const { return pairs_; }

  // out [batch, output_dim()] from x [batch, n * d]. InvalidArgument:
  // batch < 1.
  absl::Status Forward(int64_t batch, const float* x, float* out) const;

  // dx [batch, n * d] = d(loss)/dx from the forward input `x` and d_out
  // [batch, output_dim()]. InvalidArgument: batch < 1.
  absl::Status Backward(int64_t batch, const float* x, const float* d_out, float* dx) const;

 private:
  const int64_t num_vectors_;
  const int64_t dim_;
  const std::vector<std::pair<int64_t, int64_t>> pairs_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_DOT_INTERACTION_H_
