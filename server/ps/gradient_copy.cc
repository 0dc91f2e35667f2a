#include "server/ps/gradient_copy.h"

#include <algorithm>

namespace pstrain {

GradientCopy::GradientCopy(absl::Span<const GradientRef> gradients) {
  gradients_.reserve(gradients.size());
  for (const GradientRef& g : gradients) {
    Gradient copy;
    copy.variable = g.variable;
    copy.rows = g.rows;
    copy.ids.assign(g.ids.begin(), g.ids.end());
    if (!g.rows && !g.segments.empty()) {
      // The segments cover every element once: their sizes add up to the
      // variable's.
      size_t elements = 0;
      for (const DenseSegment& s : g.segments) elements += s.values.size();
      copy.values.resize(elements);
      for (const DenseSegment& s : g.segments) {
        std::copy(s.values.begin(), s.values.end(), copy.values.begin() + s.offset);
      }
    } else {
      copy.values.assign(g.values.begin(), g.values.end());
    }
    gradients_.push_back(std::move(copy));
  }
}

std::vector<GradientRef> GradientCopy::refs() const {
  std::vector<GradientRef> refs;
  refs.reserve(gradients_.size());
  for (const Gradient& g : gradients_) {
    refs.push_back(GradientRef{g.variable, g.rows, g.ids, g.values, {}});
  }
  return refs;
}

}  // namespace pstrain
