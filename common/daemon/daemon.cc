#include "common/daemon/daemon.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/daemon/ready_file.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "prometheus/gauge.h"

namespace pstrain {

Daemon::Daemon(DaemonOptions options)
    : options_(std::move(options)), registry_(std::make_shared<prometheus::Registry>()) {
  // Present in every process so a scrape tells what answered; since when is
  // the standard process_start_time_seconds (common/metrics).
  prometheus::BuildGauge()
      .Name("pstrain_process_info")
      .Help("Constant 1, labelled with the pstrain role of this process")
      .Register(*registry_)
      .Add({{"role", options_.role}})
      .Set(1);
}

Daemon::~Daemon() {
  if (server_ != nullptr) server_->Shutdown(absl::ZeroDuration());
}

absl::Status Daemon::Start(const std::vector<grpc::Service*>& services) {
  HttpServerOptions http;
  http.address = options_.metrics_address;
  http.threads = options_.metrics_threads;
  if (options_.metrics_tls) {
    http.tls_cert_file = options_.grpc.security.tls_cert_file;
    http.tls_key_file = options_.grpc.security.tls_key_file;
  }
  ASSIGN_OR_RETURN(exposer_, MetricsExposer::Start(std::move(http), registry_));
  ASSIGN_OR_RETURN(server_, GrpcServer::Start(options_.grpc, services));
  LOG(INFO) << "pstrain " << options_.role << " " << options_.cluster.task.index()
            << " serving gRPC on " << server_->address()
            << (server_->health_address().empty()
                    ? std::string()
                    : ", plaintext health on " + server_->health_address())
            << ", metrics on " << exposer_->http().scheme() << "://" << exposer_->address()
            << "/metrics"
            << (options_.cluster.coordinator_address.empty()
                    ? std::string()
                    : ", coordinator at " + options_.cluster.coordinator_address);
  if (!options_.ready_file.empty()) {
    ReadyInfo ready = {{"grpc", server_->address()},
                       {"metrics", exposer_->address()},
                       {"pid", absl::StrCat(::getpid())},
                       {"role", options_.role}};
    if (!server_->health_address().empty()) ready["health"] = server_->health_address();
    RETURN_IF_ERROR(WriteReadyFile(options_.ready_file, ready));
  }
  return absl::OkStatus();
}

int Daemon::WaitForShutdown(const std::function<void()>& before_stop) {
  const int signal = shutdown_signal_.Wait();
  LOG(INFO) << "pstrain " << options_.role << " shutting down ("
            << (signal == 0 ? std::string("requested") : absl::StrCat("signal ", signal))
            << "), grace " << absl::FormatDuration(options_.shutdown_grace);
  if (before_stop) before_stop();
  if (server_ != nullptr) server_->Shutdown(options_.shutdown_grace);
  return signal;
}

}  // namespace pstrain
