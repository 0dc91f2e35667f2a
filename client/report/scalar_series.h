#ifndef PSTRAIN_CLIENT_REPORT_SCALAR_SERIES_H_
#define PSTRAIN_CLIENT_REPORT_SCALAR_SERIES_H_

// The values of one summary tag over the global steps, ready to plot:
// scalar records (common/summary/scalar_record.h) grouped by tag, with the
// values a plot cannot place (NaN, infinities) taken out and counted.

#include <cstdint>
#include <string>
#include <vector>

#include "common/summary/scalar_record.h"

namespace pstrain {

struct SeriesPoint {
  int64_t step = 0;
  double value = 0;  // finite
};

struct ScalarSeries {
  std::string tag;
  // Finite values by step, ascending; a step written twice (a job resumed
  // from an earlier checkpoint redoes steps) keeps its last value.
  std::vector<SeriesPoint> points;
  // Values left out because they are not finite, in file order: what the
  // report says it skipped.
  std::vector<SeriesPoint> non_finite;
};

// One series per tag, ordered by `preferred_tags` first (those present, in
// that order), then the other tags alphabetically.
std::vector<ScalarSeries> GroupScalarSeries(const std::vector<ScalarRecord>& records,
                                            const std::vector<std::string>& preferred_tags = {});

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REPORT_SCALAR_SERIES_H_
