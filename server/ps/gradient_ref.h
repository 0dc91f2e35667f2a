#ifndef PSTRAIN_SERVER_PS_GRADIENT_REF_H_
#define PSTRAIN_SERVER_PS_GRADIENT_REF_H_

#include <cstdint>

#include "absl/types/span.h"
#include "common/piece/dense_segments.h"

namespace pstrain {

// One variable's gradient within a push. The data is borrowed for the
// duration of the call it is passed to.
struct GradientRef {
  int variable = -1;
  // false: every element of a dense variable, in `values` or, when
  //   `segments` is not empty, in segments that cover each element once
  //   (applied where they lie, without being copied together first).
  // true: rows `ids` of an embedding table or a dense variable, row_width
  //   floats each in `values`. Repeated ids are summed.
  bool rows = false;
  absl::Span<const int64_t> ids;
  absl::Span<const float> values;
  absl::Span<const DenseSegment> segments;
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_GRADIENT_REF_H_
