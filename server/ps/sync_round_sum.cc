#include "server/ps/sync_round_sum.h"

#include <utility>

#include "Eigen/Core"
#include "glog/logging.h"

namespace pstrain {

SyncRoundSum::SyncRoundSum(std::vector<VariableShape> variables)
    : variables_(std::move(variables)), sums_(variables_.size()) {}

void SyncRoundSum::Add(int slot, absl::Span<const GradientRef> gradients) {
  CHECK_GE(slot, next_slot_) << "slot " << slot << " contributed twice to a sync round";
  if (slot > next_slot_) {
    const bool inserted = early_.emplace(slot, GradientCopy(gradients)).second;
    CHECK(inserted) << "slot " << slot << " contributed twice to a sync round";
    return;
  }
  AddNow(gradients);
  ++next_slot_;
  for (auto it = early_.begin(); it != early_.end() && it->first == next_slot_;
       it = early_.erase(it)) {
    AddNow(it->second.refs());
    ++next_slot_;
  }
}

void SyncRoundSum::AddNow(absl::Span<const GradientRef> gradients) {
  for (const GradientRef& g : gradients) {
    const VariableShape& v = variables_[g.variable];
    VariableSum& sum = sums_[g.variable];
    if (!g.rows) {
      if (sum.dense.size() != v.num_elements) sum.dense = FloatBuffer(v.num_elements);
      const bool first = !sum.dense_set;
      sum.dense_set = true;
      auto add = [&](int64_t offset, absl::Span<const float> values) {
        const int64_t n = static_cast<int64_t>(values.size());
        Eigen::Map<Eigen::ArrayXf> acc(sum.dense.data() + offset, n);
        Eigen::Map<const Eigen::ArrayXf> grad(values.data(), n);
        if (first) {
          acc = grad;
        } else {
          acc += grad;
        }
      };
      if (g.segments.empty()) add(0, g.values);
      for (const DenseSegment& s : g.segments) add(s.offset, s.values);
      continue;
    }
    const int64_t w = v.row_width;
    for (size_t i = 0; i < g.ids.size(); ++i) {
      auto [it, inserted] =
          sum.row_index.emplace(g.ids[i], static_cast<int32_t>(sum.row_ids.size()));
      const float* src = g.values.data() + i * w;
      if (inserted) {
        sum.row_ids.push_back(g.ids[i]);
        for (int64_t j = 0; j < w; ++j) sum.row_values.push_back(src[j]);
      } else {
        float* dst = sum.row_values.data() + static_cast<int64_t>(it->second) * w;
        for (int64_t j = 0; j < w; ++j) dst[j] += src[j];
      }
    }
  }
}

std::vector<GradientRef> SyncRoundSum::Sums() const {
  std::vector<GradientRef> out;
  for (size_t i = 0; i < sums_.size(); ++i) {
    const VariableSum& sum = sums_[i];
    const int variable = static_cast<int>(i);
    if (sum.dense_set) out.push_back(GradientRef{variable, false, {}, sum.dense.span(), {}});
    if (!sum.row_ids.empty()) {
      out.push_back(GradientRef{variable, true, sum.row_ids, sum.row_values, {}});
    }
  }
  return out;
}

void SyncRoundSum::Clear() {
  for (VariableSum& sum : sums_) {
    sum.dense_set = false;
    sum.row_index.clear();
    sum.row_ids.clear();
    sum.row_values.clear();
  }
  next_slot_ = 0;
  early_.clear();
}

}  // namespace pstrain
