#include "common/model/layers/dropout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace pstrain {

Dropout::Dropout(float rate, uint64_t seed) : rate_(rate), rng_(seed) {}

absl::Status Dropout::Forward(int64_t size, const float* x, float* y, PassMode mode) {
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("negative size ", size));
  if (mode != PassMode::kTrain || rate_ <= 0) {
    if (y != x) std::copy_n(x, size, y);
    mask_.assign(static_cast<size_t>(size), 1.0f);
    return absl::OkStatus();
  }
  mask_.resize(static_cast<size_t>(size));
  const float keep_scale = 1.0f / (1.0f - rate_);
  // One 64-bit draw gives four 16-bit uniforms: the mask costs less than the
  // layer it follows.
  const uint32_t threshold = static_cast<uint32_t>(rate_ * 65536.0f);
  for (int64_t i = 0; i < size; i += 4) {
    uint64_t bits = rng_();
    for (int64_t j = i; j < std::min<int64_t>(i + 4, size); ++j, bits >>= 16) {
      mask_[j] = (bits & 0xffff) < threshold ? 0.0f : keep_scale;
    }
  }
  for (int64_t i = 0; i < size; ++i) y[i] = x[i] * mask_[i];
  return absl::OkStatus();
}

absl::Status Dropout::Backward(int64_t size, const float* dy, float* dx) const {
  if (static_cast<int64_t>(mask_.size()) != size) {
    return absl::FailedPreconditionError(
        absl::StrCat("dropout backward of ", size, " elements without a forward of that size"));
  }
  for (int64_t i = 0; i < size; ++i) dx[i] = dy[i] * mask_[i];
  return absl::OkStatus();
}

}  // namespace pstrain
