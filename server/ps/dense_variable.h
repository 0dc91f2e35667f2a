#ifndef PSTRAIN_SERVER_PS_DENSE_VARIABLE_H_
#define PSTRAIN_SERVER_PS_DENSE_VARIABLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "common/optimizer/initializer.h"
#include "common/optimizer/optimizer.h"
#include "server/ps/float_buffer.h"

namespace pstrain {

// A dense variable held whole by this shard, with one array per optimizer
// slot. Thread-safe: reads share a lock, updates take it exclusively, so a
// read never sees half of an update.
class DenseVariable {
 public:
  // Draws the initial values from `init` and fills each slot with the
  // optimizer's initial slot value. `shape` has at least one element.
  DenseVariable(std::string name, std::vector<int64_t> shape, const Initializer& init,
                const Optimizer& optimizer);

  DenseVariable(const DenseVariable&) = delete;
  DenseVariable& operator=(const DenseVariable&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  // Rows and row width when read or updated by row: shape[0] and the product
  // of the other dims (1 for a vector).
  int64_t num_rows() const { return shape_.empty() ? 1 : shape_[0]; }
  int64_t row_width() const { return num_rows() == 0 ? 0 : num_elements_ / num_rows(); }
  int num_slots() const { return num_slots_; }
  // Values and slots.
  int64_t bytes() const { return num_elements_ * (1 + num_slots_) * 4; }

  // Applies a gradient of num_elements() floats.
  void Apply(const Optimizer& optimizer, const UpdateStep& step, const float* grad);

  // Applies a gradient given as pieces: grads[i] holds counts[i] elements
  // starting at element offsets[i] (in range, not overlapping).
  void ApplyPieces(const Optimizer& optimizer, const UpdateStep& step,
                   absl::Span<const int64_t> offsets, absl::Span<const float* const> grads,
                   absl::Span<const int64_t> counts);

  // Applies gradients to rows `ids` (distinct, in [0, num_rows())),
  // row_width() floats each; other rows and their slots stay untouched.
  void ApplyRows(const Optimizer& optimizer, const UpdateStep& step, absl::Span<const int64_t> ids,
                 const float* grad);

  // Copies elements [offset, offset + out.size()) (in range) to `out`.
  void Read(int64_t offset, absl::Span<float> out) const;

  // Replaces *out with the bytes of elements [offset, offset + count) (in
  // range): one copy, straight into a message's bytes field.
  void ReadBytes(int64_t offset, int64_t count, std::string* out) const;

  // Copies rows `ids` (in range) to `out`, row_width() floats each.
  void ReadRows(absl::Span<const int64_t> ids, float* out) const;

  // Calls fn(values, slots) under the read lock (snapshots).
  void Visit(
      const std::function<void(absl::Span<const float> values,
                               const std::vector<absl::Span<const float>>& slots)>& fn) const;

  // Replaces values and slots: num_slots() slot arrays, all of
  // num_elements() floats (checked by the caller).
  void Replace(FloatBuffer values, std::vector<FloatBuffer> slots);

 private:
  // Constant after construction.
  const std::string name_;
  const std::vector<int64_t> shape_;
  const int64_t num_elements_;
  const int num_slots_;

  mutable absl::Mutex mu_;
  FloatBuffer values_ ABSL_GUARDED_BY(mu_);
  std::vector<FloatBuffer> slots_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_DENSE_VARIABLE_H_
