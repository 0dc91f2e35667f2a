#ifndef PSTRAIN_COMMON_TENSOR_BFLOAT16_H_
#define PSTRAIN_COMMON_TENSOR_BFLOAT16_H_

// bfloat16, the upper half of a float32: the same 8-bit exponent (so the
// same range) with 7 stored mantissa bits instead of 23. pstrain uses it
// only on the wire (DATA_TYPE_BFLOAT16, TrainingSpec.wire): values are
// narrowed to send and widened on arrival; nothing is computed in it.

#include <cstdint>
#include <cstring>

#include "absl/types/span.h"

namespace pstrain {

// `value` rounded to the nearest bfloat16, ties to even; NaN stays NaN
// (quiet), infinities stay infinite, and a finite value too large for
// bfloat16 rounds to infinity as float32 arithmetic would.
inline uint16_t FloatToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  // Without branches, so that loops over spans vectorise.
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x0040u;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

// The float32 a bfloat16 stands for (exact).
inline float Bfloat16ToFloat(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

// Narrows `from` into `to` (to.size() == from.size()).
void NarrowToBfloat16(absl::Span<const float> from, absl::Span<uint16_t> to);

// Narrows `values` plus `residual` into `to`, and leaves in `residual`
// what rounding took off (value + residual - widened result): error
// feedback, so that over the steps no part of the values is lost. All
// three have the same size.
void NarrowWithErrorFeedback(absl::Span<const float> values, absl::Span<float> residual,
                             absl::Span<uint16_t> to);

// Widens `count` bfloat16 values read from `from` (little-endian bytes, in
// any alignment) into `to`.
void WidenBfloat16(const char* from, int64_t count, float* to);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TENSOR_BFLOAT16_H_
