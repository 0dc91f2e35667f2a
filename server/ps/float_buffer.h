#ifndef PSTRAIN_SERVER_PS_FLOAT_BUFFER_H_
#define PSTRAIN_SERVER_PS_FLOAT_BUFFER_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "absl/types/span.h"

namespace pstrain {

// An owned, 64-byte aligned array of floats: a variable's values, an
// optimizer slot, a gradient being assembled. Move-only; not thread-safe.
class FloatBuffer {
 public:
  static constexpr size_t kAlignment = 64;

  FloatBuffer() = default;
  // `size` uninitialised floats.
  explicit FloatBuffer(int64_t size) : size_(size) {
    if (size > 0) {
      const size_t bytes =
          (static_cast<size_t>(size) * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment;
      void* p = std::aligned_alloc(kAlignment, bytes);
      if (p == nullptr) throw std::bad_alloc();
      data_.reset(static_cast<float*>(p));
    }
  }
  static FloatBuffer Filled(int64_t size, float value) {
    FloatBuffer b(size);
    b.Fill(value);
    return b;
  }

  FloatBuffer(FloatBuffer&&) noexcept = default;
  FloatBuffer& operator=(FloatBuffer&&) noexcept = default;

  void Fill(float value) {
    if (value == 0.0f) {
      if (size_ > 0) std::memset(data_.get(), 0, bytes());
      return;
    }
    for (int64_t i = 0; i < size_; ++i) data_.get()[i] = value;
  }

  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  int64_t size() const { return size_; }
  int64_t bytes() const { return size_ * static_cast<int64_t>(sizeof(float)); }
  absl::Span<float> span() { return absl::MakeSpan(data_.get(), size_); }
  absl::Span<const float> span() const { return absl::MakeConstSpan(data_.get(), size_); }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  int64_t size_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_FLOAT_BUFFER_H_
