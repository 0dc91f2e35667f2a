// pstrain-ps: one parameter-server shard of a pstrain cluster.

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "common/clock/clock.h"
#include "common/clock/interval_gate.h"
#include "common/cluster/member_session.h"
#include "common/config/checkpoint_root.h"
#include "common/daemon/daemon_main.h"
#include "common/net/channel_security.h"
#include "common/random/random_source.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "server/ps/parameter_server_service.h"
#include "server/ps/shard_store.h"

DEFINE_string(checkpoint_root, pstrain::kDefaultCheckpointRoot,
              "Folder under which every checkpoint this shard writes or restores must lie "
              "(each job's model_dir goes below it); paths outside are refused. A leading ~ "
              "is $HOME (or /tmp without one).");

DEFINE_int64(max_variable_mb, 0,
             "MiB of variables (values and optimizer slots) one job may hold on this shard. "
             "A CreateVariables beyond it is refused with RESOURCE_EXHAUSTED naming this flag, "
             "and creates nothing; dynamic embedding tables without a budget share what the "
             "rest leaves. 0: three quarters of the machine's physical memory (under "
             "Kubernetes, set it below the pod's memory limit).");

DEFINE_bool(shm, true,
            "Offer shared-memory lanes to workers on this host and network namespace: tensor "
            "bytes (dense values, embedding rows) then move through memory the worker shares "
            "with this shard, and pushes and pulls through the lane's Unix socket instead of "
            "gRPC (with the same semantics). false: everything travels over gRPC.");

namespace {

// The shard's lanes, or null when they are off or cannot be had (said once
// here; workers then keep their bytes in the messages).
std::unique_ptr<pstrain::LaneRegistry> StartLanes() {
  if (!FLAGS_shm) {
    LOG(INFO) << "shared-memory lanes are off (--shm=false)";
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<pstrain::LaneRegistry>> lanes = pstrain::LaneRegistry::Start();
  if (!lanes.ok()) {
    LOG(WARNING) << "shared-memory lanes are off: " << lanes.status();
    return nullptr;
  }
  LOG(INFO) << "shared-memory lanes on socket @" << (*lanes)->socket_name();
  return *std::move(lanes);
}

constexpr char kUsage[] =
    "pstrain-ps: one parameter-server shard of a pstrain cluster. It holds its part of the\n"
    "variables and their optimizer slots, applies pushed gradients, answers pulls, and\n"
    "writes and restores its part of each checkpoint.\n"
    "\n"
    "Usage: pstrain-ps --coordinator_address=HOST:PORT [--task_index=N] [--listen=HOST:PORT]\n"
    "   or: TF_CONFIG='{\"cluster\": {...}, \"task\": {...}}' pstrain-ps\n"
    "Flags win over TF_CONFIG (as TensorFlow and Kubeflow's TFJob set it).\n"
    "\n"
    "Serves the ParameterServer gRPC service, the health service and Prometheus\n"
    "metrics (pstrain_ps_*) on /metrics. Exits 0 on\n"
    "SIGTERM or SIGINT after letting calls in flight finish (--shutdown_grace_secs).";

// One shard: its store (variables, pushes in assembly, checkpoints, metrics)
// and the gRPC service over it.
class ParameterServerComponents : public pstrain::DaemonComponents {
 public:
  ParameterServerComponents(prometheus::Registry& registry, int64_t max_variable_bytes,
                            int max_message_bytes, const pstrain::ChannelSecurity& security)
      : store_(Options(max_variable_bytes, security), clock_, registry),
        lanes_(StartLanes()),
        service_(store_, ServiceOptions(max_message_bytes), lanes_.get()) {}

  std::vector<grpc::Service*> services() override { return {&service_}; }

  // Joins the cluster once the shard serves, so the coordinator gets its
  // real (possibly picked) addresses.
  absl::Status OnServing(pstrain::Daemon& daemon) override {
    const std::string& coordinator = daemon.options().cluster.coordinator_address;
    pstrain::MemberSessionOptions options;
    options.coordinator_address = coordinator;
    options.task = daemon.options().cluster.task;
    // Under TF_CONFIG the shard listens on 0.0.0.0:PORT, which peers cannot
    // dial; the address the cluster spec lists for it is the one to give.
    const std::string& listed = daemon.options().cluster.own_address;
    options.address = listed.empty() ? daemon.grpc_address() : listed;
    options.metrics_address = daemon.metrics_address();
    options.describe_self = [this](pstrain::HeartbeatRequest* beat) { DescribeSelf(beat); };
    options.on_shutdown = [&daemon](int exit_code) { daemon.RequestShutdown(exit_code); };
    options.on_membership = [&daemon](bool member) { daemon.SetReady(member); };
    absl::StatusOr<std::unique_ptr<pstrain::MemberSession>> membership =
        pstrain::MemberSession::Create(
            pstrain::CreateSecureChannel(coordinator, daemon.options().channel_security),
            std::move(options), pstrain::MemberSession::NewIncarnation(random_), clock_, random_);
    if (!membership.ok()) return membership.status();
    membership_ = *std::move(membership);
    // Registers, then beats, on its own thread: serving does not wait for
    // the coordinator.
    membership_->StartHeartbeats();
    return absl::OkStatus();
  }

  void OnShutdown() override { membership_.reset(); }

 private:
  // The job it serves, its newest version (the global step in sync mode)
  // and the pushes being assembled; now and then the same as the shard's
  // progress line (`kubectl logs` of a parameter server). Heartbeat thread
  // only.
  void DescribeSelf(pstrain::HeartbeatRequest* beat) {
    beat->set_health(pstrain::MEMBER_HEALTH_OK);
    beat->set_queue_depth(store_.pushes().pending_pushes());
    std::shared_ptr<pstrain::ParameterShard> job = store_.current_job();
    if (job == nullptr) return;
    beat->set_job_id(job->job_id());
    beat->set_step(job->version());
    if (!progress_log_.Open()) return;
    const int64_t since = job->job_id() == logged_job_ ? logged_version_ : 0;
    LOG(INFO) << "job " << job->job_id() << ": version " << job->version() << " (+"
              << job->version() - since << " since the last line), " << beat->queue_depth()
              << " pushes being assembled";
    logged_job_ = job->job_id();
    logged_version_ = job->version();
  }

  // A primary dials its backup as any daemon dials a peer.
  static pstrain::ShardStoreOptions Options(int64_t max_variable_bytes,
                                            const pstrain::ChannelSecurity& security) {
    pstrain::ShardStoreOptions options;
    options.replica_security = security;
    options.checkpoint_root = FLAGS_checkpoint_root;
    options.shard.max_variable_bytes = max_variable_bytes;
    return options;
  }

  // Pull answers fit the message limit (--max_message_mb): chunks of at
  // most a quarter of it (rows carry their ids besides their values), and
  // unary pulls within it.
  static pstrain::ParameterServerServiceOptions ServiceOptions(int max_message_bytes) {
    pstrain::ParameterServerServiceOptions options;
    options.chunk_bytes = std::min<int64_t>(options.chunk_bytes, max_message_bytes / 4);
    options.max_unary_pull_bytes = max_message_bytes - max_message_bytes / 16;
    return options;
  }

  pstrain::RealClock clock_;
  pstrain::SeededRandom random_;
  pstrain::ShardStore store_;
  std::unique_ptr<pstrain::LaneRegistry> lanes_;
  pstrain::ParameterServerService service_;
  std::unique_ptr<pstrain::MemberSession> membership_;
  pstrain::IntervalGate progress_log_{clock_, absl::Seconds(30)};
  std::string logged_job_;
  int64_t logged_version_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  return pstrain::RunDaemonMain(
      pstrain::TASK_TYPE_PS, kUsage, argc, argv,
      [](pstrain::Daemon& daemon) -> absl::StatusOr<std::unique_ptr<pstrain::DaemonComponents>> {
        FLAGS_checkpoint_root = pstrain::ExpandCheckpointRoot(FLAGS_checkpoint_root);
        if (FLAGS_checkpoint_root.empty() || FLAGS_checkpoint_root.front() != '/') {
          return absl::InvalidArgumentError("--checkpoint_root must be an absolute folder, got '" +
                                            FLAGS_checkpoint_root + "'");
        }
        int64_t max_variable_bytes = FLAGS_max_variable_mb << 20;
        if (FLAGS_max_variable_mb < 0 || FLAGS_max_variable_mb > (int64_t{1} << 40)) {
          return absl::InvalidArgumentError("--max_variable_mb must be in [0, 2^40], got " +
                                            std::to_string(FLAGS_max_variable_mb));
        }
        if (FLAGS_max_variable_mb == 0) {
          const int64_t physical =
              int64_t{sysconf(_SC_PHYS_PAGES)} * int64_t{sysconf(_SC_PAGE_SIZE)};
          max_variable_bytes = physical / 4 * 3;
        }
        LOG(INFO) << "a job may hold up to " << (max_variable_bytes >> 20)
                  << " MiB of variables on this shard (--max_variable_mb)";
        return std::make_unique<ParameterServerComponents>(
            *daemon.registry(), max_variable_bytes, daemon.options().grpc.max_message_bytes,
            daemon.options().channel_security);
      });
}
