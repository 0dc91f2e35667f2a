#ifndef PSTRAIN_BENCH_SIM_LATENCY_SAMPLE_H_
#define PSTRAIN_BENCH_SIM_LATENCY_SAMPLE_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace pstrain {
namespace bench {

// The latencies of one kind of call, kept whole (a run of minutes at
// thousands of calls a second is a few MB) so that percentiles are exact
// rather than bucketed. Thread-compatible: the simulator keeps one per call
// kind under its own lock.
class LatencySample {
 public:
  void Add(absl::Duration latency);
  // Adds every latency of `other`.
  void Merge(const LatencySample& other);
  void Clear() { micros_.clear(); }

  int64_t count() const { return static_cast<int64_t>(micros_.size()); }
  // The nearest-rank percentile `p` in [0, 100]: the smallest latency with
  // at least p% of the sample at or below it. Zero for an empty sample;
  // p <= 0 gives the smallest, p >= 100 the largest.
  absl::Duration Percentile(double p) const;
  absl::Duration Mean() const;

 private:
  // Microseconds; sorted lazily by Percentile.
  mutable std::vector<int64_t> micros_;
  mutable bool sorted_ = true;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SIM_LATENCY_SAMPLE_H_
