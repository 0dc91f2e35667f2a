#ifndef PSTRAIN_COMMON_METRICS_METRICS_EXPOSER_H_
#define PSTRAIN_COMMON_METRICS_METRICS_EXPOSER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/metrics/process_collector.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"

namespace pstrain {

// Serves a Prometheus registry as text format on http://<address>/metrics,
// on its own port (not the gRPC one) so scrapes never compete with
// training traffic, together with what every process reports: the
// standard process_* metrics (process_collector.h) and pstrain_build_info
// (build_info.h). Thread-safe.
class MetricsExposer {
 public:
  // `address` is host:port; port 0 picks a free one.
  // InvalidArgument: not host:port. Unavailable: the port cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(
      const std::string& address, std::shared_ptr<prometheus::Registry> registry);

  MetricsExposer(const MetricsExposer&) = delete;
  MetricsExposer& operator=(const MetricsExposer&) = delete;

  // host:port with the bound port.
  const std::string& address() const { return address_; }

 private:
  MetricsExposer(std::unique_ptr<prometheus::Exposer> exposer, std::string address,
                 std::shared_ptr<prometheus::Registry> registry);

  const std::unique_ptr<prometheus::Exposer> exposer_;
  const std::string address_;
  const std::shared_ptr<prometheus::Registry> registry_;
  // pstrain_build_info, apart from the caller's registry.
  const std::shared_ptr<prometheus::Registry> build_;
  const std::shared_ptr<ProcessCollector> process_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_METRICS_METRICS_EXPOSER_H_
