// Push + pull of dense models of several sizes through 1, 2 and 4
// parameter-server shards on loopback, with the worker's own client
// (worker/ps_client.h), beside a plain TCP stream measured in the same run.
//
// Each step the worker pushes its whole gradient with
// ParameterServerClient::Push (which waits for the shards' outcome) and then
// reads the whole model back with ParameterServerClient::Pull, as a worker
// does every step. The shards run in this process, each with its own store,
// service and gRPC server on 127.0.0.1:0, configured as pstrain-ps
// configures them. Effective rate = (bytes pushed + bytes pulled) / time.
//
//   bazel-bin/bench/ps/push_pull_bench [--models_mb=1,16,64,256]
//       [--shards=1,2,4] [--seconds=6] [--report=FILE]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/ps/loopback_reference.h"
#include "bench/ps/wire_probe.h"
#include "common/net/callback_queue_hold.h"
#include "common/process/allocator_tuning.h"
#include "gflags/gflags.h"
#include "glog/logging.h"

DEFINE_string(models_mb, "1,16,64,256", "model sizes to try, in MB (2^20 bytes)");
DEFINE_string(shards, "1,2,4", "numbers of shards to try");
DEFINE_double(seconds, 6, "measured time per configuration (at least --min_steps steps)");
DEFINE_int32(min_steps, 3, "fewest measured steps per configuration and round");
DEFINE_int32(rounds, 3,
             "rounds per configuration, the paths taking turns, each round a share of --seconds; "
             "the round with the median CPU per step is reported (a burst of other work on a "
             "shared machine then moves one round, not the ratio between the paths)");
DEFINE_int32(warmup_steps, 2, "steps before measuring");
DEFINE_int32(streams_per_shard, 2, "ParameterServerClientOptions.streams_per_shard");
DEFINE_int32(chunk_kb, 1024, "bytes of values per message, in KiB (client and shards)");
DEFINE_bool(mlp, true, "also measure the Fashion-MNIST MLP 784-256-128-10 (0.94 MB, 6 variables)");
DEFINE_string(paths, "grpc,shm",
              "data paths to measure, each beside the other: grpc (everything over gRPC "
              "streams) and shm (through shared-memory lanes: tensor bytes in the segment, "
              "requests and answers on the lane's socket)");
DEFINE_bool(reference, true,
            "measure loopback TCP (off when profiling: ratios are then to 1 GB/s)");
DEFINE_string(report, "", "write a Markdown section of the results to this file");

namespace pstrain {
namespace {

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return absl::StrCat(one, " ", five, " ", fifteen);
}

// The Fashion-MNIST MLP the end-to-end run trains: 784-256-128-10.
WireModel MlpModel() {
  WireModel m = MlpWireModel({256, 128});
  m.label = "MLP 784-256-128-10";
  return m;
}

WireProbeOptions ProbeOptions(bool shm, double seconds) {
  WireProbeOptions options;
  options.shm = shm;
  options.chunk_bytes = static_cast<int64_t>(FLAGS_chunk_kb) << 10;
  options.streams_per_shard = FLAGS_streams_per_shard;
  options.warmup_steps = FLAGS_warmup_steps;
  options.seconds = seconds;
  options.min_steps = FLAGS_min_steps;
  return options;
}

std::vector<int> ParseList(const std::string& flag, const std::string& text) {
  std::vector<int> out;
  for (absl::string_view piece : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    int v = 0;
    if (!absl::SimpleAtoi(piece, &v) || v <= 0) {
      std::fprintf(stderr, "--%s: '%s' is not a list of positive integers\n", flag.c_str(),
                   text.c_str());
      std::exit(2);
    }
    out.push_back(v);
  }
  return out;
}

struct Row {
  std::string model;
  int shards;
  std::string path;
  WireResult result;
};

// The row of (model, shards, path), or null.
const Row* FindRow(const std::vector<Row>& rows, const std::string& model, int shards,
                   const std::string& path) {
  for (const Row& row : rows) {
    if (row.model == model && row.shards == shards && row.path == path) return &row;
  }
  return nullptr;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  using namespace pstrain;  // NOLINT: a benchmark's main
  TuneAllocatorForLargeBuffers();
  // Every configuration and round starts and stops its shards and client.
  const std::unique_ptr<CallbackQueueHold> callback_queue = CallbackQueueHold::Start();
  CHECK(callback_queue != nullptr) << "cannot start the server that keeps gRPC's callback queue";
#ifdef NDEBUG
  // As the optimised daemons run (common/daemon/daemon_main.cc): without
  // Abseil's lock-order check, about 2% of this benchmark's CPU (perf).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  if (FLAGS_rounds < 1 || FLAGS_seconds <= 0) {
    std::fprintf(stderr, "--rounds must be at least 1 and --seconds above 0\n");
    return 2;
  }
  const std::vector<int> models_mb = ParseList("models_mb", FLAGS_models_mb);
  const std::vector<int> shard_counts = ParseList("shards", FLAGS_shards);
  std::vector<std::string> paths;
  for (absl::string_view path : absl::StrSplit(FLAGS_paths, ',', absl::SkipEmpty())) {
    if (path != "grpc" && path != "shm") {
      std::fprintf(stderr, "--paths: '%s' is not grpc or shm\n", std::string(path).c_str());
      return 2;
    }
    paths.emplace_back(path);
  }
  if (paths.empty()) {
    std::fprintf(stderr, "--paths: name grpc, shm or both\n");
    return 2;
  }
  const std::string load_start = LoadAverage();
  const auto begin = std::chrono::steady_clock::now();

  std::fprintf(stderr, "push_pull_bench: loopback TCP reference...\n");
  const LoopbackTcp tcp_start =
      FLAGS_reference ? MeasureLoopbackTcp(int64_t{4} << 30, 1 << 20) : LoopbackTcp{1e9, 1e9};
  std::fprintf(stderr, "  %.2f GB/s, %.2f GB per CPU second\n", tcp_start.bytes_per_second / 1e9,
               tcp_start.bytes_per_cpu_second / 1e9);

  std::vector<Row> rows;
  for (int shards : shard_counts) {
    std::vector<WireModel> these;
    if (FLAGS_mlp) these.push_back(MlpModel());
    for (int mb : models_mb) these.push_back(DenseWireModel(mb, shards));
    for (const WireModel& model : these) {
      std::map<std::string, std::vector<WireResult>> rounds;
      for (int round = 1; round <= FLAGS_rounds; ++round) {
        for (const std::string& path : paths) {
          std::fprintf(stderr, "push_pull_bench: %s over %d shard(s), %s, round %d of %d...\n",
                       model.label.c_str(), shards, path.c_str(), round, FLAGS_rounds);
          const WireResult r =
              MeasureWire(model, shards, ProbeOptions(path == "shm", FLAGS_seconds / FLAGS_rounds));
          std::fprintf(stderr, "  %d steps, %.2f GB/s, %.2f ms/step, CPU %.2f ms/step\n", r.steps,
                       r.rate() / 1e9, r.step_ms(), r.cpu_ms());
          rounds[path].push_back(r);
        }
      }
      for (const std::string& path : paths) {
        std::vector<WireResult>& measured = rounds[path];
        std::sort(measured.begin(), measured.end(),
                  [](const WireResult& a, const WireResult& b) { return a.cpu_ms() < b.cpu_ms(); });
        rows.push_back({model.label, shards, path, measured[measured.size() / 2]});
      }
    }
  }

  std::fprintf(stderr, "push_pull_bench: loopback TCP reference again...\n");
  const LoopbackTcp tcp_end =
      FLAGS_reference ? MeasureLoopbackTcp(int64_t{4} << 30, 1 << 20) : LoopbackTcp{1e9, 1e9};
  std::fprintf(stderr, "  %.2f GB/s, %.2f GB per CPU second\n", tcp_end.bytes_per_second / 1e9,
               tcp_end.bytes_per_cpu_second / 1e9);
  const double tcp = (tcp_start.bytes_per_second + tcp_end.bytes_per_second) / 2;
  const double tcp_per_cpu = (tcp_start.bytes_per_cpu_second + tcp_end.bytes_per_cpu_second) / 2;
  const std::string load_end = LoadAverage();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

  std::ostringstream md;
  md << "## Push + pull of dense models through the worker's client\n\n";
  md << "Each step the worker's own client (`worker/ps_client.h`) pushes the whole gradient "
        "(`ParameterServerClient::Push`, float32, "
     << FLAGS_chunk_kb << " KiB chunks, " << FLAGS_streams_per_shard
     << " streams per shard for a shard's share over 4 MiB, waiting for the shards' outcome) and "
        "then reads the whole model back (`ParameterServerClient::Pull`); the shards apply SGD. "
        "The shards run in the same process, each with its own store, service and gRPC server on "
        "127.0.0.1 configured as `pstrain-ps` configures them; a model of N MB is one variable "
        "per shard, the MLP its six variables placed round-robin. GB/s = (bytes pushed + bytes "
        "pulled) / wall time, over at least "
     << FLAGS_seconds / FLAGS_rounds << " s and " << FLAGS_min_steps << " steps after "
     << FLAGS_warmup_steps << " warm-up steps, in " << FLAGS_rounds
     << " rounds in which the paths take turns; each row is the round with the median CPU per "
        "step. Path grpc: everything over the gRPC streams, tensor bytes in the "
        "messages; shm: through shared-memory lanes (tensor bytes in the segment, requests "
        "and answers on the lane's Unix socket), measured once the lanes are open. The ratio "
        "is to one plain loopback TCP stream (1 MiB writes) measured in the same run, the mean of "
        "its figure at the start and at the end. CPU ms/step is "
        "the process's user + system time per step, worker and shards together; GB per CPU "
        "second = bytes moved / that time. The pulled values are checked against the SGD "
        "updates of every step.\n\n";
  std::vector<std::string> shown;
  for (const std::string& a : args) {
    if (a.rfind("--report", 0) != 0 && a.rfind("--svg", 0) != 0) shown.push_back(a);
  }
  md << "```\nbazel-bin/bench/ps/push_pull_bench" << (shown.empty() ? "" : " ")
     << absl::StrJoin(shown, " ") << "\n```\n\n";
  md << absl::StrFormat("Load average at start: %s; at end: %s. Run time %.0f s.\n\n", load_start,
                        load_end, wall);
  md << absl::StrFormat(
      "Reference: loopback TCP, one stream, 1 MiB writes: %.2f GB/s at the start, %.2f GB/s at "
      "the end (mean %.2f GB/s)%s. In CPU, %.2f and %.2f GB per CPU second (mean %.2f): each "
      "byte written once and read once, as a pushed or pulled byte is, by a sender and a "
      "receiver thread, the kernel's copies included; the most any path over TCP sockets moves "
      "per second of CPU here. The last column's share of it is in parentheses.\n\n",
      tcp_start.bytes_per_second / 1e9, tcp_end.bytes_per_second / 1e9, tcp / 1e9,
      FLAGS_reference ? "" : " (not measured: 1 GB/s)", tcp_start.bytes_per_cpu_second / 1e9,
      tcp_end.bytes_per_cpu_second / 1e9, tcp_per_cpu / 1e9);
  md << "| model | shards | path | steps | push+pull GB/s | ratio to TCP | step ms | CPU "
        "ms/step | GB per CPU second (share of TCP's) |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& row : rows) {
    const WireResult& r = row.result;
    md << absl::StrFormat("| %s | %d | %s | %d | %.3f | %.2f | %.2f | %.2f | %.2f (%.2f) |\n",
                          row.model, row.shards, row.path, r.steps, r.rate() / 1e9, r.rate() / tcp,
                          r.step_ms(), r.cpu_ms(), r.bytes_per_cpu_second() / 1e9,
                          r.bytes_per_cpu_second() / tcp_per_cpu);
  }
  md << "\n";
  bool found = false;
  for (const Row& row : rows) {
    if (row.model == "64 MB" && row.shards == 2 && row.path == "grpc") {
      const double ratio = row.result.rate() / tcp;
      md << absl::StrFormat(
          "Target: 64 MB model over 2 shards at >= 50%% of raw loopback TCP: %s (%.0f%%: %.2f of "
          "%.2f GB/s)\n",
          ratio >= 0.5 ? "**met**" : "**not met**", ratio * 100, row.result.rate() / 1e9,
          tcp / 1e9);
      found = true;
    }
  }
  if (!found) {
    md << "Target: 64 MB model over 2 shards at >= 50% of raw loopback TCP: not measured in this "
          "run (needs 64 in --models_mb and 2 in --shards)\n";
  }
  // The fixed costs per shard: the MLP's CPU per step on more shards
  // against one shard, measured in this run.
  const std::string mlp = MlpModel().label;
  const Row* one_shard = FindRow(rows, mlp, 1, "grpc");
  for (int shards : {2, 4}) {
    const Row* more = FindRow(rows, mlp, shards, "grpc");
    const std::string target = absl::StrFormat(
        "Target: the MLP's push+pull on %d shards at <= 1.25x the CPU per step of 1 shard (grpc)",
        shards);
    if (one_shard == nullptr || more == nullptr) {
      md << target << ": not measured in this run (needs --mlp, grpc in --paths and 1 and "
         << shards << " in --shards)\n";
      continue;
    }
    const double ratio = more->result.cpu_ms() / one_shard->result.cpu_ms();
    md << absl::StrFormat("%s: %s (%.2fx: %.2f against %.2f ms)\n", target,
                          ratio <= 1.25 ? "**met**" : "**not met**", ratio, more->result.cpu_ms(),
                          one_shard->result.cpu_ms());
  }
  // The shared-memory path against the message path, per shard count.
  for (int shards : shard_counts) {
    const Row* grpc = FindRow(rows, mlp, shards, "grpc");
    const Row* shm = FindRow(rows, mlp, shards, "shm");
    const std::string target = absl::StrFormat(
        "Target: the MLP's push+pull on %d shard(s) through shared memory at <= 0.3x the CPU per "
        "step of the grpc path",
        shards);
    if (grpc == nullptr || shm == nullptr) {
      md << target << ": not measured in this run (needs --mlp and both --paths)\n";
      continue;
    }
    const double ratio = shm->result.cpu_ms() / grpc->result.cpu_ms();
    md << absl::StrFormat("%s: %s (%.2fx: %.2f against %.2f ms)\n", target,
                          ratio <= 0.3 ? "**met**" : "**not met**", ratio, shm->result.cpu_ms(),
                          grpc->result.cpu_ms());
  }
  std::printf("%s", md.str().c_str());
  if (!FLAGS_report.empty()) {
    std::ofstream out(FLAGS_report);
    out << md.str();
    if (!out.good()) {
      std::fprintf(stderr, "push_pull_bench: cannot write the report to %s\n",
                   FLAGS_report.c_str());
      return 1;
    }
  }
  return 0;
}
