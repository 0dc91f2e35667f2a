#include "common/tensor/bfloat16.h"

namespace pstrain {

// The loops take raw pointers the compiler may assume apart (__restrict),
// so that it vectorises them: a step of a large model narrows and widens
// millions of values.

void NarrowToBfloat16(absl::Span<const float> from, absl::Span<uint16_t> to) {
  const float* __restrict in = from.data();
  uint16_t* __restrict out = to.data();
  const size_t n = from.size();
  for (size_t i = 0; i < n; ++i) out[i] = FloatToBfloat16(in[i]);
}

void NarrowWithErrorFeedback(absl::Span<const float> values, absl::Span<float> residual,
                             absl::Span<uint16_t> to) {
  const float* __restrict in = values.data();
  float* __restrict left = residual.data();
  uint16_t* __restrict out = to.data();
  const size_t n = values.size();
  for (size_t i = 0; i < n; ++i) {
    const float corrected = in[i] + left[i];
    const uint16_t narrowed = FloatToBfloat16(corrected);
    out[i] = narrowed;
    left[i] = corrected - Bfloat16ToFloat(narrowed);
  }
}

void WidenBfloat16(const char* from, int64_t count, float* to) {
  const char* __restrict in = from;
  float* __restrict out = to;
  for (int64_t i = 0; i < count; ++i) {
    uint16_t value;
    std::memcpy(&value, in + 2 * i, sizeof(value));
    out[i] = Bfloat16ToFloat(value);
  }
}

}  // namespace pstrain
