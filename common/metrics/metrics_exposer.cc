#include "common/metrics/metrics_exposer.h"

#include <utility>
#include <vector>

#include "common/metrics/build_info.h"
#include "common/status/status_macros.h"
#include "prometheus/text_serializer.h"

namespace pstrain {

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(
    HttpServerOptions http, std::shared_ptr<prometheus::Registry> registry) {
  ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> server, HttpServer::Start(std::move(http)));
  std::unique_ptr<MetricsExposer> metrics(new MetricsExposer(std::move(server), registry));
  metrics->server_->Handle("/metrics", [raw = metrics.get()](const HttpRequest& request) {
    if (request.method != "GET") return HttpResponse::Text(405, "/metrics answers GET\n");
    HttpResponse page = HttpResponse::Text(200, raw->Scrape());
    page.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return page;
  });
  return metrics;
}

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry) {
  HttpServerOptions http;
  http.address = address;
  return Start(std::move(http), std::move(registry));
}

MetricsExposer::MetricsExposer(std::unique_ptr<HttpServer> server,
                               std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)),
      build_(std::make_shared<prometheus::Registry>()),
      process_(std::make_shared<ProcessCollector>()),
      server_(std::move(server)) {
  RegisterBuildInfo(*build_);
}

std::string MetricsExposer::Scrape() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  for (const prometheus::Collectable* more :
       {static_cast<const prometheus::Collectable*>(build_.get()),
        static_cast<const prometheus::Collectable*>(process_.get())}) {
    std::vector<prometheus::MetricFamily> collected = more->Collect();
    families.insert(families.end(), std::make_move_iterator(collected.begin()),
                    std::make_move_iterator(collected.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace pstrain
