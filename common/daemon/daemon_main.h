#ifndef PSTRAIN_COMMON_DAEMON_DAEMON_MAIN_H_
#define PSTRAIN_COMMON_DAEMON_DAEMON_MAIN_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/daemon/daemon.h"
#include "common/daemon/exit_codes.h"
#include "grpcpp/impl/codegen/service_type.h"

namespace pstrain {

// What a daemon serves: its gRPC services and whatever they need to live
// (core objects, threads). Destroyed after the server has stopped.
class DaemonComponents {
 public:
  virtual ~DaemonComponents() = default;
  // Borrowed by the server; valid for the lifetime of this object.
  virtual std::vector<grpc::Service*> services() = 0;

  // Called once the daemon serves, with its bound addresses known (ports
  // picked at start included): the moment to register with the coordinator
  // or start work. An error stops the daemon with exit code 1.
  virtual absl::Status OnServing(Daemon& daemon) { return absl::OkStatus(); }

  // Called when shutdown begins, before the server stops: the moment to stop
  // background work (heartbeats, training loops) so it does not outlive it.
  virtual void OnShutdown() {}

  // The exit code once SIGTERM or SIGINT (`signal`) has stopped the daemon.
  // Default 0: a member asked to leave has done what was asked. A one-shot
  // coordinator whose job has not ended says it was interrupted.
  virtual int ExitCodeAfterSignal(int signal) const { return kDaemonExitOk; }
};

// Builds a daemon's components once flags are parsed; the daemon's metrics
// registry is ready. An error is printed and the process exits 2 (bad
// configuration).
using ComponentsFactory =
    std::function<absl::StatusOr<std::unique_ptr<DaemonComponents>>(Daemon& daemon)>;

// The whole life of a pstrain daemon of type `type`, shared by every *_main.cc: parse
// flags (`usage` heads --help), build the components, serve, wait for
// SIGTERM/SIGINT or a shutdown request, shut down within the grace. Exit
// codes (exit_codes.h): after a signal, the components' ExitCodeAfterSignal;
// after a request, the code it asked for; 1 when serving failed (port in
// use); 2 for bad flags or configuration.
int RunDaemonMain(TaskType type, absl::string_view usage, int argc, char** argv,
                  const ComponentsFactory& build_components);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DAEMON_DAEMON_MAIN_H_
