#ifndef PSTRAIN_BENCH_COMMON_METRICS_PAGE_H_
#define PSTRAIN_BENCH_COMMON_METRICS_PAGE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pstrain {
namespace bench {

// One sample of a Prometheus text exposition: `name{label="value",...} 1.5`.
struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// A scraped /metrics page (the Prometheus text format), parsed. Immutable
// once built; safe to share between threads.
class MetricsPage {
 public:
  // Parses the text format (comments and blank lines skipped; a timestamp
  // after the value ignored). InvalidArgument names the first line that is
  // not a sample.
  static absl::StatusOr<MetricsPage> Parse(const std::string& text);

  // The sum of the samples named `name` whose labels include every entry of
  // `labels` (so {} sums a whole family); 0 when none matches, as an unset
  // counter reads.
  double Sum(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;

  // Whether a sample named `name` with every entry of `labels` is on the
  // page: tells a counter at 0 from one the process does not export (yet).
  bool Has(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;

  const std::vector<MetricSample>& samples() const { return samples_; }

 private:
  std::vector<MetricSample> samples_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMMON_METRICS_PAGE_H_
