#ifndef PSTRAIN_COMMON_METRICS_METRICS_EXPOSER_H_
#define PSTRAIN_COMMON_METRICS_METRICS_EXPOSER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/metrics/process_collector.h"
#include "common/net/http_server.h"
#include "prometheus/registry.h"

namespace pstrain {

// Serves a Prometheus registry as text format on http://<address>/metrics,
// on its own port (not the gRPC one) so scrapes never compete with
// training traffic, together with what every process reports: the
// standard process_* metrics (process_collector.h) and pstrain_build_info
// (build_info.h). The port is an HttpServer that may serve more pages
// (the coordinator's console). Thread-safe.
class MetricsExposer {
 public:
  // `http.address` is host:port; port 0 picks a free one. With TLS files
  // in `http`, the port serves HTTPS.
  // InvalidArgument: not host:port, unusable TLS files. Unavailable: the
  // port cannot be bound.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(
      HttpServerOptions http, std::shared_ptr<prometheus::Registry> registry);
  // HTTP on `address`.
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(
      const std::string& address, std::shared_ptr<prometheus::Registry> registry);

  MetricsExposer(const MetricsExposer&) = delete;
  MetricsExposer& operator=(const MetricsExposer&) = delete;

  // host:port with the bound port.
  const std::string& address() const { return server_->address(); }
  // The server of the port, for further pages.
  HttpServer& http() { return *server_; }

 private:
  MetricsExposer(std::unique_ptr<HttpServer> server,
                 std::shared_ptr<prometheus::Registry> registry);

  // The text exposition of every collectable.
  std::string Scrape() const;

  const std::shared_ptr<prometheus::Registry> registry_;
  // pstrain_build_info, apart from the caller's registry.
  const std::shared_ptr<prometheus::Registry> build_;
  const std::shared_ptr<ProcessCollector> process_;
  // Last, so destroyed first: no scrape runs once the collectables go.
  const std::unique_ptr<HttpServer> server_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_METRICS_METRICS_EXPOSER_H_
