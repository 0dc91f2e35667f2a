#include "common/daemon/daemon_main.h"

#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/cli/command_line.h"
#include "common/daemon/shutdown_signal.h"
#include "common/process/allocator_tuning.h"
#include "glog/logging.h"

namespace pstrain {

int RunDaemonMain(TaskType type, absl::string_view usage, int argc, char** argv,
                  const ComponentsFactory& build_components) {
  TuneAllocatorForLargeBuffers();  // before any thread starts
  BlockShutdownSignals();
#ifdef NDEBUG
  // Debian's Abseil is built to check the order of every Mutex lock for
  // deadlock cycles, about 1% of a busy shard's or worker's CPU (perf).
  // Optimised builds skip it; test builds keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  InitCommandLine(usage, &argc, &argv);
  const std::string program = argv[0];
  if (argc > 1) {
    std::cerr << program << ": unexpected argument '" << argv[1]
              << "'; every setting is a --flag (see --help)\n";
    return kDaemonExitBadConfiguration;
  }
  absl::StatusOr<DaemonOptions> options = DaemonOptionsFromFlags(type);
  if (!options.ok()) {
    std::cerr << program << ": " << options.status().message() << "\n";
    return kDaemonExitBadConfiguration;
  }
  Daemon daemon(*std::move(options));
  absl::StatusOr<std::unique_ptr<DaemonComponents>> components = build_components(daemon);
  if (!components.ok()) {
    std::cerr << program << ": " << components.status().message() << "\n";
    return kDaemonExitBadConfiguration;
  }
  if (absl::Status started = daemon.Start((*components)->services()); !started.ok()) {
    LOG(ERROR) << started.message();
    return kDaemonExitFailed;
  }
  if (absl::Status serving = (*components)->OnServing(daemon); !serving.ok()) {
    LOG(ERROR) << serving.message();
    (*components)->OnShutdown();
    return kDaemonExitFailed;
  }
  const int signal = daemon.WaitForShutdown([&] { (*components)->OnShutdown(); });
  const int exit_code =
      signal != 0 ? (*components)->ExitCodeAfterSignal(signal) : daemon.requested_exit_code();
  LOG(INFO) << "pstrain " << RoleName(type) << " stopped"
            << (exit_code != kDaemonExitOk ? absl::StrCat(", exit code ", exit_code) : "");
  return exit_code;
}

}  // namespace pstrain
