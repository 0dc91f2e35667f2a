#ifndef PSTRAIN_COMMON_DATA_STANDARDIZATION_H_
#define PSTRAIN_COMMON_DATA_STANDARDIZATION_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace pstrain {

// What standardises each dense feature: x -> (x - mean) * scale.
struct Standardization {
  std::vector<float> mean;
  // 1 / the standard deviation (of the population); 1 for a feature that
  // never varies, which is then only centred.
  std::vector<float> scale;
};

// The standardisation of `values`, examples of `dense_dim` features each,
// row-major; sums in double, so that millions of rows lose no precision.
Standardization StandardizationOf(absl::Span<const float> values, int64_t dense_dim);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_STANDARDIZATION_H_
