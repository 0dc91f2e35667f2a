#include "client/report/scalar_series.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pstrain {

std::vector<ScalarSeries> GroupScalarSeries(const std::vector<ScalarRecord>& records,
                                            const std::vector<std::string>& preferred_tags) {
  // Per tag: step -> value, so a later record of a step replaces an earlier.
  std::map<std::string, std::map<int64_t, double>> finite;
  std::map<std::string, std::vector<SeriesPoint>> non_finite;
  for (const ScalarRecord& record : records) {
    if (std::isfinite(record.value)) {
      finite[record.tag][record.step] = record.value;
      non_finite[record.tag];  // the tag exists even if every value was finite
    } else {
      non_finite[record.tag].push_back({record.step, record.value});
      finite[record.tag];
    }
  }
  std::vector<std::string> order;
  for (const std::string& tag : preferred_tags) {
    if (finite.count(tag) > 0) order.push_back(tag);
  }
  for (const auto& [tag, unused] : finite) {
    if (std::find(preferred_tags.begin(), preferred_tags.end(), tag) == preferred_tags.end()) {
      order.push_back(tag);
    }
  }
  std::vector<ScalarSeries> result;
  for (const std::string& tag : order) {
    ScalarSeries series;
    series.tag = tag;
    for (const auto& [step, value] : finite[tag]) series.points.push_back({step, value});
    series.non_finite = std::move(non_finite[tag]);
    result.push_back(std::move(series));
  }
  return result;
}

}  // namespace pstrain
