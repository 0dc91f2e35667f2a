#ifndef PSTRAIN_WORKER_WORKER_PROCESS_H_
#define PSTRAIN_WORKER_WORKER_PROCESS_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/net/channel_security.h"
#include "prometheus/registry.h"
#include "protos/cluster.pb.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "worker/coordinator_client.h"
#include "common/random/random_source.h"
#include "worker/worker_loop.h"
#include "worker/worker_metrics.h"

namespace pstrain {
namespace worker {

struct WorkerProcessOptions {
  // This worker (worker/N) and the coordinator's host:port. Required.
  TaskId task;
  std::string coordinator_address;
  // Listed in the coordinator's membership; may be empty.
  std::string address;
  std::string metrics_address;
  // TLS and the cluster token of every channel (coordinator and parameter
  // servers, unless loop.ps_channels is set). Default: plaintext, no token.
  ChannelSecurity security;
  CoordinatorClientOptions coordinator;  // task and addresses filled from above
  WorkerLoopOptions loop;
};

// A worker process's training side: the clock, randomness, metrics,
// coordinator client and trainer loop, with the loop running on a thread
// of its own from Start until destruction. Thread-safe.
class WorkerProcess {
 public:
  // Starts the loop. `registry` must outlive the process object;
  // `on_exit` is called from the loop's thread if the loop ends by itself,
  // with the code the process should exit with (exit_codes.h): the one the
  // coordinator gave when it shut the cluster down, or 1 when the loop
  // stopped on an error (this process was replaced by a newer incarnation,
  // a final refusal).
  // InvalidArgument: no coordinator address, or a task that is not a
  // worker.
  static absl::StatusOr<std::unique_ptr<WorkerProcess>> Start(WorkerProcessOptions options,
                                                              prometheus::Registry& registry,
                                                              std::function<void(int)> on_exit);

  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  // Stops the loop and joins its thread, then leaves the cluster
  // (MemberSession::Leave): the coordinator hands the untrained records of
  // its lease to others at once.
  ~WorkerProcess();

  uint64_t incarnation() const { return coordinator_->member().incarnation(); }

 private:
  explicit WorkerProcess(prometheus::Registry& registry);

  RealClock clock_;
  SeededRandom random_;
  WorkerMetrics metrics_;
  std::unique_ptr<CoordinatorClient> coordinator_;
  std::unique_ptr<WorkerLoop> loop_;
  std::thread thread_;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_WORKER_PROCESS_H_
