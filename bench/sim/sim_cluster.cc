#include "bench/sim/sim_cluster.h"

#include <signal.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/common/job_submission.h"
#include "client/binary_locator.h"
#include "common/daemon/ready_file.h"
#include "common/net/health_client.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"
#include "grpcpp/grpcpp.h"

namespace pstrain {
namespace bench {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(30);
constexpr absl::Duration kCallTimeout = absl::Seconds(30);

// The last `lines` lines of the file at `path`.
std::string TailOf(const std::string& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> kept;
  for (std::string line; std::getline(in, line);) {
    kept.push_back(line);
    if (static_cast<int>(kept.size()) > lines) kept.erase(kept.begin());
  }
  std::string tail;
  for (const std::string& line : kept) absl::StrAppend(&tail, line, "\n");
  return tail;
}

}  // namespace

absl::StatusOr<std::unique_ptr<SimCluster>> SimCluster::Start(const SimClusterOptions& options) {
  if (options.run_dir.empty() || options.checkpoint_root.empty()) {
    return absl::InvalidArgumentError("run_dir and checkpoint_root are required");
  }
  ASSIGN_OR_RETURN(const std::string coordinator,
                   LocateBinary("pstrain-coordinator", options.bin_dir));
  ASSIGN_OR_RETURN(const std::string ps, LocateBinary("pstrain-ps", options.bin_dir));
  std::unique_ptr<SimCluster> cluster(new SimCluster());
  cluster->options_ = options;
  ASSIGN_OR_RETURN(
      cluster->coordinator_address_,
      cluster->StartProcess(
          coordinator, "coordinator",
          {"--num_ps=1", absl::StrCat("--num_workers=", options.num_workers),
           absl::StrCat("--max_workers=", options.max_workers),
           absl::StrCat("--heartbeat_interval_secs=",
                        absl::ToDoubleSeconds(options.heartbeat_interval)),
           absl::StrCat("--heartbeat_timeout_secs=",
                        absl::ToDoubleSeconds(options.heartbeat_timeout)),
           absl::StrCat("--records_per_lease=", options.records_per_lease), "--state_dir=none",
           "--console=false", absl::StrCat("--checkpoint_root=", options.checkpoint_root)}));
  ASSIGN_OR_RETURN(
      cluster->shard_address_,
      cluster->StartProcess(ps, "ps",
                            {absl::StrCat("--coordinator_address=", cluster->coordinator_address_),
                             absl::StrCat("--checkpoint_root=", options.checkpoint_root)}));
  cluster->jobs_ = JobService::NewStub(
      grpc::CreateChannel(cluster->coordinator_address_, grpc::InsecureChannelCredentials()));
  return cluster;
}

absl::StatusOr<std::string> SimCluster::StartProcess(const std::string& program,
                                                     const std::string& role,
                                                     std::vector<std::string> args) {
  const std::string ready = absl::StrCat(options_.run_dir, "/", role, "-0.ready");
  const std::string log = absl::StrCat(options_.run_dir, "/", role, "-0.log");
  std::remove(ready.c_str());
  std::remove(log.c_str());
  ChildProcessOptions child;
  child.program = program;
  child.args = {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--task_index=0",
                absl::StrCat("--ready_file=", ready)};
  child.args.insert(child.args.end(), args.begin(), args.end());
  child.log_path = log;
  ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> process, ChildProcess::Start(child));
  ChildProcess* raw = process.get();
  processes_.push_back(std::move(process));
  logs_.push_back(log);
  absl::StatusOr<ReadyInfo> info = WaitForReadyFile(ready, kStartTimeout, [&]() -> absl::Status {
    if (std::optional<ExitStatus> exit = raw->Poll(); exit.has_value()) {
      return absl::AbortedError(absl::StrCat("it exited with ", exit->ToString()));
    }
    return absl::OkStatus();
  });
  if (!info.ok()) {
    return absl::Status(info.status().code(),
                        absl::StrCat(role, " did not start: ", info.status().message(),
                                     "\n--- end of ", log, " ---\n", TailOf(log, 15)));
  }
  const std::string address = (*info)["grpc"];
  RETURN_IF_ERROR(CheckHealth(address, absl::Seconds(10), ""));
  return address;
}

SimCluster::~SimCluster() { Stop().IgnoreError(); }

int SimCluster::coordinator_pid() const { return processes_.at(0)->pid(); }
int SimCluster::shard_pid() const { return processes_.at(1)->pid(); }

absl::StatusOr<std::string> SimCluster::Submit(const std::string& spec_text) {
  return SubmitJobSpec(*jobs_, spec_text, kCallTimeout);
}

absl::StatusOr<JobStatus> SimCluster::Job(const std::string& job_id) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kCallTimeout));
  GetJobRequest request;
  request.set_job_id(job_id);
  JobStatus job;
  const grpc::Status status = jobs_->GetJob(&context, request, &job);
  if (!status.ok()) return FromGrpcStatus(status);
  return job;
}

absl::Status SimCluster::CheckRunning() {
  const char* roles[] = {"coordinator", "ps/0"};
  for (size_t i = 0; i < processes_.size(); ++i) {
    if (std::optional<ExitStatus> exit = processes_[i]->Poll(); exit.has_value()) {
      return absl::UnavailableError(absl::StrCat(roles[i], " ended: ", exit->ToString(),
                                                 "\n--- end of ", logs_[i], " ---\n",
                                                 TailOf(logs_[i], 15)));
    }
  }
  return absl::OkStatus();
}

absl::Status SimCluster::Stop() {
  absl::Status stopped = absl::OkStatus();
  for (auto it = processes_.rbegin(); it != processes_.rend(); ++it) {
    const ExitStatus exit = (*it)->Stop(absl::Seconds(10));
    if (exit.signal != 0 && stopped.ok()) {
      stopped = absl::InternalError(absl::StrCat("a process ended with ", exit.ToString()));
    }
  }
  processes_.clear();
  return stopped;
}

}  // namespace bench
}  // namespace pstrain
