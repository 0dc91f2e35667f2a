#include "common/daemon/daemon_main.h"

#include <iostream>
#include <string>

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
    return 2;
  }
  absl::StatusOr<DaemonOptions> options = DaemonOptionsFromFlags(type);
  if (!options.ok()) {
    std::cerr << program << ": " << options.status().message() << "\n";
    return 2;
  }
  Daemon daemon(*std::move(options));
  absl::StatusOr<std::unique_ptr<DaemonComponents>> components = build_components(daemon);
  if (!components.ok()) {
    std::cerr << program << ": " << components.status().message() << "\n";
    return 2;
  }
  if (absl::Status started = daemon.Start((*components)->services()); !started.ok()) {
    LOG(ERROR) << started.message();
    return 1;
  }
  if (absl::Status serving = (*components)->OnServing(daemon); !serving.ok()) {
    LOG(ERROR) << serving.message();
    (*components)->OnShutdown();
    return 1;
  }
  daemon.WaitForShutdown([&] { (*components)->OnShutdown(); });
  LOG(INFO) << "pstrain " << RoleName(type) << " stopped";
  return 0;
}

}  // namespace pstrain
