#include "worker/worker_process.h"

#include <utility>

#include "common/daemon/exit_codes.h"
#include "glog/logging.h"
#include "grpcpp/grpcpp.h"

namespace pstrain {
namespace worker {

WorkerProcess::WorkerProcess(prometheus::Registry& registry) : metrics_(registry) {}

absl::StatusOr<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(
    WorkerProcessOptions options, prometheus::Registry& registry,
    std::function<void(int)> on_exit) {
  if (options.coordinator_address.empty()) {
    return absl::InvalidArgumentError(
        "a worker needs the coordinator's address (--coordinator_address or TF_CONFIG's chief)");
  }
  if (options.task.type() != TASK_TYPE_WORKER) {
    return absl::InvalidArgumentError("the worker process runs worker tasks only");
  }
  std::unique_ptr<WorkerProcess> process(new WorkerProcess(registry));
  CoordinatorClientOptions coordinator = options.coordinator;
  coordinator.coordinator_address = options.coordinator_address;
  coordinator.task = options.task;
  coordinator.address = options.address;
  coordinator.metrics_address = options.metrics_address;
  if (!options.loop.ps_channels) options.loop.ps_channels = LaneChannels(options.security);
  absl::StatusOr<std::unique_ptr<CoordinatorClient>> client = CoordinatorClient::Create(
      CreateSecureChannel(options.coordinator_address, options.security), std::move(coordinator),
      MemberSession::NewIncarnation(process->random_), process->clock_, process->random_);
  if (!client.ok()) return client.status();
  process->coordinator_ = *std::move(client);
  process->loop_ =
      std::make_unique<WorkerLoop>(*process->coordinator_, std::move(options.loop), process->clock_,
                                   process->random_, &process->metrics_);
  LOG(INFO) << "worker/" << options.task.index() << " incarnation "
            << process->coordinator_->member().incarnation() << " follows the coordinator at "
            << options.coordinator_address;
  WorkerLoop* loop = process->loop_.get();
  MemberSession& member = process->coordinator_->member();
  process->thread_ = std::thread([loop, &member, on_exit = std::move(on_exit)] {
    absl::Status status = loop->Run();
    if (!status.ok()) {
      LOG(ERROR) << "the worker stops: " << status;
      if (on_exit) on_exit(kDaemonExitFailed);
      return;
    }
    if (!loop->shutdown_requested()) return;  // stopped by the process itself
    if (on_exit) on_exit(member.last_heartbeat().exit_code);
  });
  return process;
}

WorkerProcess::~WorkerProcess() {
  if (loop_ != nullptr) loop_->Stop();
  if (thread_.joinable()) thread_.join();
  // Training has stopped: no push of this process goes out any more, so
  // the coordinator can read the shards' ledgers and hand the untrained
  // rest of its lease to others now rather than at its deadline.
  if (coordinator_ != nullptr) coordinator_->member().Leave("the worker process stops").IgnoreError();
}

}  // namespace worker
}  // namespace pstrain
