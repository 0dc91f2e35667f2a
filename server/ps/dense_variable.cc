#include "server/ps/dense_variable.h"

#include <cstring>
#include <utility>

namespace pstrain {
namespace {

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

DenseVariable::DenseVariable(std::string name, std::vector<int64_t> shape, const Initializer& init,
                             const Optimizer& optimizer)
    : name_(std::move(name)),
      shape_(std::move(shape)),
      num_elements_(NumElements(shape_)),
      num_slots_(optimizer.num_slots()),
      values_(num_elements_) {
  init.FillDense(0, values_.span());
  for (int k = 0; k < num_slots_; ++k) {
    slots_.push_back(FloatBuffer::Filled(num_elements_, optimizer.slot_initial_value(k)));
  }
}

void DenseVariable::Apply(const Optimizer& optimizer, const UpdateStep& step, const float* grad) {
  absl::MutexLock l(&mu_);
  float* slots[Optimizer::kMaxSlots];
  for (int k = 0; k < num_slots_; ++k) slots[k] = slots_[k].data();
  optimizer.Apply(step, grad, num_elements_, values_.data(), slots);
}

void DenseVariable::ApplyPieces(const Optimizer& optimizer, const UpdateStep& step,
                                absl::Span<const int64_t> offsets,
                                absl::Span<const float* const> grads,
                                absl::Span<const int64_t> counts) {
  absl::MutexLock l(&mu_);
  float* slots[Optimizer::kMaxSlots];
  for (size_t i = 0; i < offsets.size(); ++i) {
    for (int k = 0; k < num_slots_; ++k) slots[k] = slots_[k].data() + offsets[i];
    optimizer.Apply(step, grads[i], counts[i], values_.data() + offsets[i], slots);
  }
}

void DenseVariable::ApplyRows(const Optimizer& optimizer, const UpdateStep& step,
                              absl::Span<const int64_t> ids, const float* grad) {
  const int64_t width = row_width();
  absl::MutexLock l(&mu_);
  float* slots[Optimizer::kMaxSlots];
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t offset = ids[i] * width;
    for (int k = 0; k < num_slots_; ++k) slots[k] = slots_[k].data() + offset;
    optimizer.Apply(step, grad + i * width, width, values_.data() + offset, slots);
  }
}

void DenseVariable::Read(int64_t offset, absl::Span<float> out) const {
  absl::ReaderMutexLock l(&mu_);
  std::memcpy(out.data(), values_.data() + offset, out.size() * sizeof(float));
}

void DenseVariable::ReadBytes(int64_t offset, int64_t count, std::string* out) const {
  absl::ReaderMutexLock l(&mu_);
  out->assign(reinterpret_cast<const char*>(values_.data() + offset), count * sizeof(float));
}

void DenseVariable::ReadRows(absl::Span<const int64_t> ids, float* out) const {
  const int64_t width = row_width();
  absl::ReaderMutexLock l(&mu_);
  for (size_t i = 0; i < ids.size(); ++i) {
    std::memcpy(out + i * width, values_.data() + ids[i] * width, width * sizeof(float));
  }
}

void DenseVariable::Visit(
    const std::function<void(absl::Span<const float>, const std::vector<absl::Span<const float>>&)>&
        fn) const {
  absl::ReaderMutexLock l(&mu_);
  std::vector<absl::Span<const float>> slots;
  for (const FloatBuffer& s : slots_) slots.push_back(s.span());
  fn(values_.span(), slots);
}

void DenseVariable::Replace(FloatBuffer values, std::vector<FloatBuffer> slots) {
  absl::MutexLock l(&mu_);
  values_ = std::move(values);
  slots_ = std::move(slots);
}

}  // namespace pstrain
