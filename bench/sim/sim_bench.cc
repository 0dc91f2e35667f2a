// The simulator of many light members: hundreds to thousands of light
// workers in this process speak the real protocol to a real coordinator and
// a real shard (separate processes), to measure what the coordinator and a
// shard cost per member far past what this machine runs as real workers.
//
//   bazel build -c opt //bench/sim:sim_bench
//   bazel-bin/bench/sim/sim_bench --report=sim.md
//
// bench/run_all.sh runs it as the benchmark `sim`; bench/README.md says
// what each figure means.

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/report/markdown_report.h"
#include "bench/sim/sim_phases.h"
#include "bench/sim/sim_report.h"
#include "common/process/allocator_tuning.h"
#include "gflags/gflags.h"

DEFINE_string(report, "", "Write the Markdown section here (default: stdout).");
DEFINE_string(members, "100,1000,10000",
              "Light workers per coordinator point, comma-separated; each point starts a fresh "
              "coordinator and shard. The first is the base the others' CPU per member is "
              "compared with. Empty: no coordinator points.");
DEFINE_double(heartbeat_interval_secs, 2,
              "The coordinator's --heartbeat_interval_secs, which every light worker keeps "
              "(its timeout is five times it, as the defaults 2 s and 10 s).");
DEFINE_double(step_interval_secs, 2,
              "A light worker's step period: each step consumes --batch records of its lease "
              "and, with --member_dense_floats or --member_rows, pulls and pushes on the shard.");
DEFINE_int32(batch, 64, "Records a step consumes from the member's data lease.");
DEFINE_int64(records_per_lease, 640,
             "The coordinator's --records_per_lease: with --batch 64, a lease is completed and "
             "another acquired every 10 steps.");
DEFINE_int32(steps_per_report, 5, "A light worker reports progress every this many steps.");
DEFINE_int64(member_dense_floats, 0,
             "Dense values a light worker of the coordinator points pulls and pushes whole at "
             "each step (the job's dense variables are sized to it). Default 0 with "
             "--member_rows=0: the steps leave the shard alone, so that the machine's two cores "
             "go to the coordinator and the simulator (at 4,000 members pushing every 2 s the "
             "shard and the simulator's streams took 1.3 cores); the shard is measured on its "
             "own under --pushers.");
DEFINE_int32(member_rows, 0, "Embedding rows a light worker pulls and pushes per step.");
DEFINE_int32(job_extra_layers, 0,
             "Hidden layers of width 2 added to the coordinator points' job: each adds two "
             "variables to every member's assignment (what a model of many variables costs the "
             "coordinator per member).");
DEFINE_double(window_secs, 20, "Measured window of each coordinator point.");
DEFINE_double(settle_secs, 90,
              "Longest wait for every member of a point to register and hold the job; past it "
              "the point is measured as far as it got and the report says how far.");
DEFINE_int32(channels, 8,
             "Connections the light workers share to each server (a real worker has its own).");
DEFINE_int32(driver_threads, 1,
             "Threads that fire the members' due heartbeats and steps; the calls run on "
             "gRPC's callback threads.");
DEFINE_string(pushers, "1,8,64,512",
              "Concurrent pushers per shard point, comma-separated; 1 is the base. Empty: no "
              "shard points.");
DEFINE_int64(shard_dense_kib, 256, "KiB of dense gradients in one dense push.");
DEFINE_int32(shard_rows, 256, "Embedding rows in one sparse push (16 floats a row).");
DEFINE_double(shard_window_secs, 5, "Measured window of each shard point (after 1 s of warm-up).");
DEFINE_string(bin_dir, "",
              "Where pstrain-coordinator and pstrain-ps are; empty: this program's runfiles.");
DEFINE_bool(keep_run_dir, false, "Keep the processes' logs after a successful run.");

namespace pstrain {
namespace bench {
namespace {

absl::StatusOr<std::vector<int>> Counts(const std::string& flag, const std::string& text) {
  std::vector<int> counts;
  for (absl::string_view word : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int count = 0;
    if (!absl::SimpleAtoi(word, &count) || count < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " takes counts >= 1 separated by commas, got '", text, "'"));
    }
    counts.push_back(count);
  }
  return counts;
}

// Room for a socket per member and stream: the soft limit up to the hard.
void RaiseOpenFileLimit() {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

absl::Status Run(const std::string& command, const std::string& run_dir) {
  absl::StatusOr<std::vector<int>> members = Counts("members", FLAGS_members);
  if (!members.ok()) return members.status();
  absl::StatusOr<std::vector<int>> pushers = Counts("pushers", FLAGS_pushers);
  if (!pushers.ok()) return pushers.status();
  if (FLAGS_heartbeat_interval_secs <= 0 || FLAGS_step_interval_secs <= 0 ||
      FLAGS_window_secs <= 0 || FLAGS_shard_window_secs <= 0) {
    return absl::InvalidArgumentError("intervals and windows must be > 0");
  }
  SimPlace place{FLAGS_bin_dir, run_dir};
  // Made now: it records the load average at the start of the run.
  MarkdownReport report(kSimReportTitle);

  SimRun run;
  run.command = command;
  run.heartbeat_interval_secs = FLAGS_heartbeat_interval_secs;
  run.step_interval_secs = FLAGS_step_interval_secs;
  run.records_per_lease = FLAGS_records_per_lease;
  run.steps_per_report = FLAGS_steps_per_report;

  CoordinatorPhaseOptions coordinator;
  coordinator.heartbeat_interval = absl::Seconds(FLAGS_heartbeat_interval_secs);
  coordinator.step_interval = absl::Seconds(FLAGS_step_interval_secs);
  coordinator.records_per_lease = FLAGS_records_per_lease;
  coordinator.worker.batch_size = FLAGS_batch;
  coordinator.worker.steps_per_report = FLAGS_steps_per_report;
  coordinator.worker.push_dense = FLAGS_member_dense_floats > 0;
  coordinator.worker.push_sparse = FLAGS_member_rows > 0;
  coordinator.worker.rows = FLAGS_member_rows;
  coordinator.job.dense_floats = std::max<int64_t>(FLAGS_member_dense_floats, 1024);
  coordinator.job.batch_size = FLAGS_batch;
  coordinator.job.extra_layers = FLAGS_job_extra_layers;
  coordinator.channels = FLAGS_channels;
  coordinator.driver_threads = FLAGS_driver_threads;
  coordinator.settle_timeout = absl::Seconds(FLAGS_settle_secs);
  coordinator.window = absl::Seconds(FLAGS_window_secs);
  run.member_push_bytes =
      (coordinator.worker.push_dense ? SimDenseFloats(coordinator.job) * 4 : 0) +
      (coordinator.worker.push_sparse ? int64_t{FLAGS_member_rows} * coordinator.job.dim * 4 : 0);
  for (int count : *members) {
    absl::StatusOr<CoordinatorPoint> point = MeasureCoordinator(count, coordinator, place);
    if (!point.ok()) return point.status();
    run.coordinator.push_back(*std::move(point));
  }

  if (!pushers->empty()) {
    ShardPhaseOptions shard;
    shard.job.dense_floats = FLAGS_shard_dense_kib * 1024 / 4;
    shard.rows = FLAGS_shard_rows;
    shard.pushers = *pushers;
    shard.channels = FLAGS_channels;
    shard.window = absl::Seconds(FLAGS_shard_window_secs);
    absl::StatusOr<std::vector<ShardPoint>> points = MeasureShard(shard, place);
    if (!points.ok()) return points.status();
    run.shard = *std::move(points);
  }

  AddSimReport(run, &report);
  if (FLAGS_report.empty()) {
    std::fputs(report.Render().c_str(), stdout);
    return absl::OkStatus();
  }
  return report.WriteTo(FLAGS_report);
}

}  // namespace
}  // namespace bench
}  // namespace pstrain

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  words.insert(words.begin(), "bazel-bin/bench/sim/sim_bench");
  const std::string command = absl::StrJoin(words, " ");
  gflags::SetUsageMessage(
      "many light workers (no compute, no thread each) against a real coordinator and shard: "
      "the coordinator's CPU, memory and call latencies by member count, a shard's push rate "
      "by concurrent pushers");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  pstrain::TuneAllocatorForLargeBuffers();
  pstrain::bench::RaiseOpenFileLimit();

  const char* tmp = std::getenv("TMPDIR");
  std::string run_dir = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/pstrain-sim-XXXXXX");
  if (::mkdtemp(run_dir.data()) == nullptr) {
    std::fprintf(stderr, "sim_bench: cannot create a folder like %s\n", run_dir.c_str());
    return 1;
  }
  absl::Status status = pstrain::bench::Run(command, run_dir);
  if (!status.ok()) {
    std::fprintf(stderr, "sim_bench: FAILED: %s\n(logs kept in %s)\n", status.ToString().c_str(),
                 run_dir.c_str());
    return 1;
  }
  if (!FLAGS_keep_run_dir) {
    std::error_code ignored;
    std::filesystem::remove_all(run_dir, ignored);
  } else {
    std::fprintf(stderr, "sim_bench: logs in %s\n", run_dir.c_str());
  }
  return 0;
}
