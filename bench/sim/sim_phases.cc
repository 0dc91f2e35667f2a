#include "bench/sim/sim_phases.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "bench/common/process_cpu.h"
#include "bench/common/resident_memory.h"
#include "bench/sim/push_pull_stream.h"
#include "bench/sim/shard_load.h"
#include "bench/sim/sim_channels.h"
#include "bench/sim/sim_cluster.h"
#include "bench/sim/worker_fleet.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace bench {
namespace {

void Progress(const std::string& line) { std::cerr << "sim: " << line << std::endl; }

absl::StatusOr<std::string> PointDir(const SimPlace& place, const std::string& name) {
  const std::string dir = absl::StrCat(place.run_dir, "/", name);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::UnavailableError(absl::StrCat("cannot make ", dir));
  }
  if (mkdir((dir + "/checkpoints").c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::UnavailableError(absl::StrCat("cannot make ", dir, "/checkpoints"));
  }
  return dir;
}

// Pulls once on its own stream: the job's variables with their shapes.
absl::StatusOr<std::vector<SimVariable>> LearnVariables(const std::string& shard_address,
                                                        ShardTraffic traffic) {
  auto stub = ParameterServer::NewStub(SimChannel(shard_address, 1000));
  std::shared_ptr<PushPullStream> stream = PushPullStream::Open(*stub);
  traffic.dense = traffic.sparse = true;
  absl::Notification done;
  absl::Status status;
  std::vector<PushPullResponse> answers;
  stream->Exchange({PullMessage(traffic, 0)}, [&](absl::Status s, std::vector<PushPullResponse> a) {
    status = std::move(s);
    answers = std::move(a);
    done.Notify();
  });
  if (!done.WaitForNotificationWithTimeout(absl::Seconds(30))) {
    stream->Close();
    done.WaitForNotification();
    return absl::DeadlineExceededError("the first pull was not answered within 30 s");
  }
  stream->Close();
  RETURN_IF_ERROR(status);
  RETURN_IF_ERROR(LearnShapes(answers, &traffic.variables));
  if (!ShapesKnown(traffic.variables)) {
    return absl::InternalError("the first pull did not say every variable's shape");
  }
  return traffic.variables;
}

}  // namespace

absl::StatusOr<CoordinatorPoint> MeasureCoordinator(int members,
                                                    const CoordinatorPhaseOptions& options,
                                                    const SimPlace& place) {
  CoordinatorPoint point;
  point.members = members;
  ASSIGN_OR_RETURN(const std::string dir, PointDir(place, absl::StrCat("members-", members)));
  SimClusterOptions cluster_options;
  cluster_options.bin_dir = place.bin_dir;
  cluster_options.run_dir = dir;
  cluster_options.checkpoint_root = dir + "/checkpoints";
  cluster_options.num_workers = members;
  cluster_options.max_workers = std::clamp(members, 1, 4096);
  cluster_options.heartbeat_interval = options.heartbeat_interval;
  // As the default's ratio to the interval (10 s to 2 s).
  cluster_options.heartbeat_timeout = options.heartbeat_interval * 5;
  cluster_options.records_per_lease = options.records_per_lease;
  ASSIGN_OR_RETURN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(cluster_options));
  Progress(absl::StrCat(members, " members: coordinator at ", cluster->coordinator_address(),
                        " (pid ", cluster->coordinator_pid(), "), shard at ",
                        cluster->shard_address()));

  WorkerFleetOptions fleet_options;
  fleet_options.coordinator_address = cluster->coordinator_address();
  fleet_options.shard_address = cluster->shard_address();
  fleet_options.members = members;
  fleet_options.heartbeat_interval = options.heartbeat_interval;
  fleet_options.step_interval = options.step_interval;
  fleet_options.channels = options.channels;
  fleet_options.driver_threads = options.driver_threads;
  fleet_options.worker = options.worker;
  ASSIGN_OR_RETURN(std::unique_ptr<WorkerFleet> fleet, WorkerFleet::Start(fleet_options));
  ASSIGN_OR_RETURN(const std::string job_id, cluster->Submit(SimJobSpecText(options.job)));

  // Until every member holds the job.
  const absl::Time started = absl::Now();
  absl::Time next_line = started;
  for (;;) {
    const int registered = fleet->Registered();
    const int assigned = fleet->Assigned();
    absl::Status running = cluster->CheckRunning();
    if (assigned == members) break;
    if (!running.ok()) {
      point.broke = std::string(running.message());
      break;
    }
    if (absl::Now() - started > options.settle_timeout) {
      absl::StatusOr<JobStatus> job = cluster->Job(job_id);
      point.broke = absl::StrCat(
          "only ", registered, " of ", members, " registered and ", assigned,
          " held the job's assignment after ", absl::FormatDuration(options.settle_timeout),
          job.ok() ? absl::StrCat(" (job ", JobState_Name(job->state()), " ", job->reason(), ")")
                   : "");
      break;
    }
    if (absl::Now() >= next_line) {
      Progress(absl::StrCat(
          members, " members: ", registered, " registered, ", assigned, " assigned after ",
          absl::StrFormat("%.0f", absl::ToDoubleSeconds(absl::Now() - started)), " s"));
      next_line += absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  Progress(absl::StrCat(members, " members: ", fleet->Assigned(), " hold the job after ",
                        absl::StrFormat("%.1f", absl::ToDoubleSeconds(absl::Now() - started)),
                        " s; measuring ", absl::FormatDuration(options.window)));
  absl::SleepFor(options.warmup);

  fleet->tally().Take();
  fleet->tally().TakeLateness();
  const int64_t skipped_before = fleet->SkippedEvents();
  point.registered = fleet->Registered();
  point.assigned = fleet->Assigned();
  ASSIGN_OR_RETURN(const double cpu_before, CpuSeconds(cluster->coordinator_pid()));
  ASSIGN_OR_RETURN(const double own_cpu_before, CpuSeconds(getpid()));
  const absl::Time window_start = absl::Now();
  for (absl::Duration left = options.window; left > absl::ZeroDuration();
       left -= absl::Seconds(5)) {
    absl::SleepFor(std::min(left, absl::Seconds(5)));
    absl::StatusOr<double> cpu = CpuSeconds(cluster->coordinator_pid());
    Progress(absl::StrCat(
        members,
        " members: ", absl::StrFormat("%.0f", absl::ToDoubleSeconds(absl::Now() - window_start)),
        " s into the window, coordinator CPU ",
        cpu.ok() ? absl::StrFormat("%.1f s", *cpu - cpu_before) : "unknown"));
  }
  const absl::Time window_end = absl::Now();
  absl::StatusOr<double> cpu_after = CpuSeconds(cluster->coordinator_pid());
  absl::StatusOr<double> own_cpu_after = CpuSeconds(getpid());
  absl::StatusOr<int64_t> resident = ResidentBytes(cluster->coordinator_pid());
  if (own_cpu_after.ok()) point.simulator_cpu_seconds = *own_cpu_after - own_cpu_before;
  point.calls = fleet->tally().Take();
  point.lateness = fleet->tally().TakeLateness();
  point.skipped_events = fleet->SkippedEvents() - skipped_before;
  point.seconds = absl::ToDoubleSeconds(window_end - window_start);
  if (cpu_after.ok()) point.cpu_seconds = *cpu_after - cpu_before;
  if (resident.ok()) point.resident_bytes = *resident;
  if (point.broke.empty()) {
    if (absl::Status running = cluster->CheckRunning(); !running.ok()) {
      point.broke = std::string(running.message());
    } else if (point.call(SimCall::kHeartbeat).failed() > 0) {
      point.broke = absl::StrCat(point.call(SimCall::kHeartbeat).failed(),
                                 " heartbeats failed or were refused in the window");
    } else if (point.call(SimCall::kHeartbeat).latency.Percentile(99) >
               options.heartbeat_interval) {
      point.broke = "heartbeat p99 above the heartbeat interval";
    }
  }
  Progress(
      absl::StrCat(members, " members: done; coordinator ",
                   absl::StrFormat("%.1f", point.CpuMicrosPerMemberSecond()),
                   " µs CPU per member-s, heartbeat p99 ",
                   absl::FormatDuration(point.call(SimCall::kHeartbeat).latency.Percentile(99)),
                   point.broke.empty() ? "" : absl::StrCat("; broke: ", point.broke)));
  fleet->Stop();
  cluster->Stop().IgnoreError();
  return point;
}

absl::StatusOr<std::vector<ShardPoint>> MeasureShard(const ShardPhaseOptions& options,
                                                     const SimPlace& place) {
  ASSIGN_OR_RETURN(const std::string dir, PointDir(place, "shard"));
  const int most = *std::max_element(options.pushers.begin(), options.pushers.end());
  SimClusterOptions cluster_options;
  cluster_options.bin_dir = place.bin_dir;
  cluster_options.run_dir = dir;
  cluster_options.checkpoint_root = dir + "/checkpoints";
  cluster_options.num_workers = 1;
  cluster_options.max_workers = std::clamp(most, 1, 4096);
  ASSIGN_OR_RETURN(std::unique_ptr<SimCluster> cluster, SimCluster::Start(cluster_options));

  // One light worker holds the job (heartbeats, no pushes) so that it runs.
  WorkerFleetOptions fleet_options;
  fleet_options.coordinator_address = cluster->coordinator_address();
  fleet_options.shard_address = cluster->shard_address();
  fleet_options.members = 1;
  fleet_options.channels = 1;
  fleet_options.worker.push_dense = fleet_options.worker.push_sparse = false;
  ASSIGN_OR_RETURN(std::unique_ptr<WorkerFleet> fleet, WorkerFleet::Start(fleet_options));
  ASSIGN_OR_RETURN(const std::string job_id, cluster->Submit(SimJobSpecText(options.job)));
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (fleet->Assigned() < 1) {
    RETURN_IF_ERROR(cluster->CheckRunning());
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError("the shard's job did not start within 60 s");
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  ShardTraffic traffic = fleet->worker(0).traffic();
  traffic.rows = options.rows;
  ASSIGN_OR_RETURN(traffic.variables, LearnVariables(cluster->shard_address(), traffic));

  std::vector<ShardPoint> points;
  for (const std::string kind : {"dense", "sparse"}) {
    traffic.dense = kind == "dense";
    traffic.sparse = kind == "sparse";
    int64_t push_bytes = 0;
    for (const SimVariable& variable : traffic.variables) {
      if (variable.table && traffic.sparse)
        push_bytes += int64_t{traffic.rows} * variable.row_width * 4;
      if (!variable.table && traffic.dense) push_bytes += variable.DenseFloats() * 4;
    }
    for (int pushers : options.pushers) {
      ShardLoadOptions load;
      load.shard_address = cluster->shard_address();
      load.traffic = traffic;
      load.pushers = pushers;
      load.channels = options.channels;
      load.warmup = options.warmup;
      load.window = options.window;
      ShardPoint point;
      point.kind = kind;
      point.pushers = pushers;
      point.push_bytes = push_bytes;
      ASSIGN_OR_RETURN(const double cpu_before, CpuSeconds(cluster->shard_pid()));
      absl::StatusOr<ShardLoadFigures> figures = RunShardLoad(load);
      absl::StatusOr<double> cpu_after = CpuSeconds(cluster->shard_pid());
      absl::StatusOr<int64_t> resident = ResidentBytes(cluster->shard_pid());
      if (figures.ok()) {
        point.seconds = figures->seconds;
        point.applied = figures->applied;
        point.latency = std::move(figures->latency);
        for (const auto& [what, count] : figures->not_applied) {
          point.not_applied += count;
          absl::StrAppend(&point.not_applied_detail, point.not_applied_detail.empty() ? "" : ", ",
                          what, ": ", count);
        }
      } else {
        point.broke = std::string(figures.status().message());
      }
      // The CPU over warm-up, window and drain, spread over the window:
      // close enough for a closed loop that runs the same throughout.
      if (cpu_after.ok()) {
        point.cpu_seconds = (*cpu_after - cpu_before) * absl::ToDoubleSeconds(options.window) /
                            absl::ToDoubleSeconds(options.window + options.warmup);
      }
      if (resident.ok()) point.resident_bytes = *resident;
      if (absl::Status running = cluster->CheckRunning(); !running.ok()) {
        point.broke = std::string(running.message());
      }
      Progress(absl::StrCat("shard, ", kind, ", ", pushers,
                            " pushers: ", absl::StrFormat("%.0f", point.AppliedPerSecond()),
                            " applied pushes/s, p99 ",
                            absl::FormatDuration(point.latency.Percentile(99)),
                            point.broke.empty() ? "" : absl::StrCat("; ", point.broke)));
      const bool broke = !point.broke.empty();
      points.push_back(std::move(point));
      if (broke) break;
    }
  }
  fleet->Stop();
  cluster->Stop().IgnoreError();
  return points;
}

}  // namespace bench
}  // namespace pstrain
