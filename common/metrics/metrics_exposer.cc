#include "common/metrics/metrics_exposer.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/metrics/build_info.h"
#include "common/net/host_port.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry) {
  ASSIGN_OR_RETURN(HostPort endpoint, ParseHostPort(address));
  std::unique_ptr<prometheus::Exposer> exposer;
  // prometheus-cpp reports a port it cannot bind by throwing; keep that
  // inside this wrapper.
  try {
    exposer = std::make_unique<prometheus::Exposer>(endpoint.ToString());
  } catch (const std::exception& error) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": ", error.what()));
  }
  const std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", address));
  }
  endpoint.port = ports.front();
  std::unique_ptr<MetricsExposer> metrics(new MetricsExposer(std::move(exposer),
                                                             endpoint.ToString(), registry));
  // The exposer holds weak pointers: every collectable lives as long as this
  // object (the registry is shared with the caller).
  metrics->exposer_->RegisterCollectable(metrics->registry_);
  metrics->exposer_->RegisterCollectable(metrics->build_);
  metrics->exposer_->RegisterCollectable(metrics->process_);
  return metrics;
}

MetricsExposer::MetricsExposer(std::unique_ptr<prometheus::Exposer> exposer, std::string address,
                               std::shared_ptr<prometheus::Registry> registry)
    : exposer_(std::move(exposer)),
      address_(std::move(address)),
      registry_(std::move(registry)),
      build_(std::make_shared<prometheus::Registry>()),
      process_(std::make_shared<ProcessCollector>()) {
  RegisterBuildInfo(*build_);
}

}  // namespace pstrain
