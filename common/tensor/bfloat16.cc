#include "common/tensor/bfloat16.h"

namespace pstrain {

void NarrowToBfloat16(absl::Span<const float> from, absl::Span<uint16_t> to) {
  for (size_t i = 0; i < from.size(); ++i) to[i] = FloatToBfloat16(from[i]);
}

void NarrowWithErrorFeedback(absl::Span<const float> values, absl::Span<float> residual,
                             absl::Span<uint16_t> to) {
  for (size_t i = 0; i < values.size(); ++i) {
    const float corrected = values[i] + residual[i];
    const uint16_t narrowed = FloatToBfloat16(corrected);
    to[i] = narrowed;
    residual[i] = corrected - Bfloat16ToFloat(narrowed);
  }
}

void WidenBfloat16(const char* from, int64_t count, float* to) {
  for (int64_t i = 0; i < count; ++i) {
    uint16_t value;
    std::memcpy(&value, from + 2 * i, sizeof(value));
    to[i] = Bfloat16ToFloat(value);
  }
}

}  // namespace pstrain
