#include "bench/cluster/scaling.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/cluster/bench_job.h"
#include "bench/cluster/sizing_model.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/report/markdown_table.h"
#include "common/net/callback_queue_hold.h"

namespace pstrain {
namespace bench {
namespace {

void ModelSweepSection(const ScalingResults& results, MarkdownReport& report) {
  MarkdownTable table({"model", "parameters", "cluster examples/s", "single process examples/s",
                       "ratio", "cluster ns/parameter/step", "single process ns/parameter/step",
                       "steps per worker",
                       "worker ms per step: data_wait / pull / compute / "
                       "push_wait / idle",
                       "push latency ms"});
  for (const ThroughputPoint& point : results.model_sweep) {
    std::vector<std::string> steps;
    for (const WorkerWindow& worker : point.window.workers) steps.push_back(Fixed(worker.steps, 0));
    table.AddRow({point.label, absl::StrFormat("%.2fM", MlpParameters(point.hidden_units) / 1e6),
                  Fixed(point.window.ExamplesPerSecond(), 0),
                  Fixed(point.reference->examples_per_sec, 0),
                  Fixed(point.window.ExamplesPerSecond() / point.reference->examples_per_sec, 2),
                  Fixed(NsPerParameterStep(point), 2),
                  Fixed(ReferenceNsPerParameterStep(*point.reference, point.hidden_units), 2),
                  absl::StrJoin(steps, ", "), MeanPhasesText(point.window),
                  MeanPushLatencyText(point.window)});
  }
  report.SubHeading("Scaling with the model (async, 1 ps + 2 workers)");
  report.Paragraph(
      "MLPs with two equal hidden layers sized for the parameter count; the single-process "
      "trainer on each model is the reference. ns/parameter/step is wall time per update "
      "(all workers' steps) divided by the parameters. Phases are recorded when they end, so "
      "with only a few steps in a window a phase begun before it counts in full and idle can "
      "come out negative.");
  report.Table(table);
}

double TotalSteps(const ThroughputWindow& window) {
  double steps = 0;
  for (const WorkerWindow& worker : window.workers) steps += worker.steps;
  return steps;
}

// The worker sweep's point of `workers` workers and 1 shard; null when it
// did not run.
const ThroughputPoint* SweepPoint(const ScalingResults& results, int workers) {
  for (const ThroughputPoint& point : results.worker_sweep) {
    if (point.workers == workers && point.shards == 1 && point.reference.has_value() &&
        TotalSteps(point.window) > 0) {
      return &point;
    }
  }
  return nullptr;
}

int HostCores() { return static_cast<int>(std::thread::hardware_concurrency()); }

// The sizing model's calibration: the worker sweep's points of 1 worker
// and of 4 (the second may be missing), the one with the cores least
// contended and one well past the cores, so that what contention costs is
// not lost in the machine's noise.
constexpr int kContendedWorkers = 4;
bool IsCalibration(const ScalingResults& results, const ThroughputPoint& point) {
  return &point == SweepPoint(results, 1) || &point == SweepPoint(results, kContendedWorkers);
}

CalibrationRun AsCalibration(const ThroughputPoint* point) {
  if (point == nullptr) return CalibrationRun();
  const double steps = TotalSteps(point->window);
  return CalibrationRun{point->window.seconds / (steps / point->workers),
                        point->window.cpu_seconds / steps, point->workers + point->shards + 2};
}

// The MLP's step costs with `exchange`: the compute of the worker sweep's
// reference and the other costs of its calibration points (less the
// exchange through lanes to 1 shard); none without the 1-worker point.
std::optional<StepCosts> MlpStepCosts(const ScalingResults& results, const WireResult& exchange) {
  const ThroughputPoint* first = SweepPoint(results, 1);
  auto one = results.exchanges.find(1);
  if (first == nullptr || one == results.exchanges.end()) return std::nullopt;
  const double compute = kBatch / first->reference->examples_per_sec;
  const OtherCosts other = CalibrateOtherCosts(
      AsCalibration(first), AsCalibration(SweepPoint(results, kContendedWorkers)), HostCores(),
      compute, one->second.seconds / one->second.steps,
      one->second.cpu_seconds / one->second.steps);
  StepCosts costs{compute, exchange.seconds / exchange.steps, exchange.cpu_seconds / exchange.steps,
                  other.wall, other.cpu};
  costs.contention_cpu = other.contention_cpu;
  costs.other_share = other.share;
  return costs;
}

// The sizing model's prediction for `point`, on this host; none without
// the costs or the exchange's for its shards.
std::optional<Prediction> Predicted(const ScalingResults& results, const ThroughputPoint& point) {
  auto these = results.exchanges.find(point.shards);
  if (these == results.exchanges.end()) return std::nullopt;
  const std::optional<StepCosts> costs = MlpStepCosts(results, these->second);
  if (!costs.has_value()) return std::nullopt;
  ClusterShape shape;
  shape.workers = point.workers;
  shape.shards = point.shards;
  shape.batch = kBatch;
  shape.host_cores = HostCores();
  shape.model_bytes = these->second.bytes_per_step / 2.0;
  return PredictThroughput(*costs, shape);
}

// The prediction for `point` and how far the measurement is from it, as
// two cells.
std::vector<std::string> PredictionCells(const ScalingResults& results,
                                         const ThroughputPoint& point) {
  if (IsCalibration(results, point)) return {"(calibration)", ""};
  const std::optional<Prediction> predicted = Predicted(results, point);
  const double measured = point.window.ExamplesPerSecond();
  if (!predicted.has_value() || measured <= 0) return {"", ""};
  return {absl::StrCat(Fixed(predicted->examples_per_second, 0), " (", predicted->limit, ")"),
          absl::StrCat(Fixed((predicted->examples_per_second / measured - 1) * 100, 0), "%")};
}

void WorkerSweepSection(const ScalingResults& results, MarkdownReport& report) {
  MarkdownTable table({"workers", "examples/s", "ratio to 1 worker", "ratio to single process",
                       "ms per step per worker", "ns/parameter/step",
                       "worker ms per step: data_wait / pull / compute / push_wait / idle",
                       "push latency ms", "cluster CPU ms per step", "predicted examples/s (limit)",
                       "prediction off by"});
  const double one = results.worker_sweep.front().window.ExamplesPerSecond();
  for (const ThroughputPoint& point : results.worker_sweep) {
    const double steps = TotalSteps(point.window);
    const double per_worker_ms =
        steps > 0 ? point.window.seconds / (steps / point.workers) * 1e3 : 0;
    std::vector<std::string> row = {
        point.label,
        Fixed(point.window.ExamplesPerSecond(), 0),
        Fixed(point.window.ExamplesPerSecond() / one, 2),
        point.reference.has_value()
            ? Fixed(point.window.ExamplesPerSecond() / point.reference->examples_per_sec, 2)
            : "",
        Fixed(per_worker_ms, 2),
        Fixed(NsPerParameterStep(point), 2),
        MeanPhasesText(point.window),
        MeanPushLatencyText(point.window),
        steps > 0 ? Fixed(point.window.cpu_seconds / steps * 1e3, 2) : ""};
    for (std::string& cell : PredictionCells(results, point)) row.push_back(std::move(cell));
    table.AddRow(row);
  }
  report.SubHeading("Scaling with the workers (async, 1 ps, Fashion-MNIST MLP)");
  report.Paragraph(absl::StrCat(
      "A new cluster per worker count; the single-process trainer ran just before the sweep. "
      "The machine has ",
      std::thread::hardware_concurrency(),
      " cores, shared by the parameter server, the workers and the coordinator. The "
      "prediction is the sizing model's (docs/sizing.md), calibrated on the 1- and 4-worker "
      "points."));
  report.Table(table);
}

void ShardSweepSection(const ScalingResults& results, MarkdownReport& report) {
  MarkdownTable table({"shards", "workers", "examples/s", "ratio to 1 shard",
                       "ratio to single process", "cluster CPU ms per step",
                       "worker ms per step: data_wait / pull / compute / push_wait / idle",
                       "predicted examples/s (limit)", "prediction off by"});
  const double one = results.shard_sweep.front().window.ExamplesPerSecond();
  for (const ThroughputPoint& point : results.shard_sweep) {
    const double steps = TotalSteps(point.window);
    std::vector<std::string> row = {
        absl::StrCat(point.shards),
        absl::StrCat(point.workers),
        Fixed(point.window.ExamplesPerSecond(), 0),
        Fixed(point.window.ExamplesPerSecond() / one, 2),
        point.reference.has_value()
            ? Fixed(point.window.ExamplesPerSecond() / point.reference->examples_per_sec, 2)
            : "",
        steps > 0 ? Fixed(point.window.cpu_seconds / steps * 1e3, 2) : "",
        MeanPhasesText(point.window)};
    for (std::string& cell : PredictionCells(results, point)) row.push_back(std::move(cell));
    table.AddRow(row);
  }
  report.SubHeading("Scaling with the parameter servers (async, 2 workers, Fashion-MNIST MLP)");
  report.Paragraph(
      "A new cluster per shard count, the MLP's variables placed over the shards; the "
      "single-process trainer ran just before the sweep. The prediction is the sizing "
      "model's, calibrated on the worker sweep's 1- and 4-worker points.");
  report.Table(table);
}

void ExchangeSection(const ScalingResults& results, MarkdownReport& report) {
  MarkdownTable table(
      {"path", "shards", "steps", "push+pull ms per step", "CPU ms per step", "push+pull GB/s"});
  auto add = [&table](const char* path, int shards, const WireResult& r) {
    table.AddRow({path, absl::StrCat(shards), absl::StrCat(r.steps), Fixed(r.step_ms(), 3),
                  Fixed(r.cpu_ms(), 3), Fixed(r.rate() / 1e9, 2)});
  };
  for (const auto& [shards, r] : results.exchanges) add("lanes", shards, r);
  if (results.grpc_exchange.has_value()) add("gRPC", 1, *results.grpc_exchange);
  report.SubHeading("The MLP's exchange, measured apart (the sizing model's input)");
  report.Paragraph(
      "One worker's client pushes the MLP's whole gradient and pulls the model back, step after "
      "step, through shared-memory lanes (as the local cluster) or over gRPC (as between "
      "hosts) to shards in cluster_bench's own process (bench/ps/wire_probe.h), before any "
      "cluster runs. CPU is worker and shards together.");
  report.Table(table);
}

}  // namespace

absl::Status RunModelSweep(ClusterBenchSettings& settings, BenchCluster& cluster,
                           ScalingResults& results) {
  for (int64_t size : settings.model_sizes) {
    const std::vector<int64_t> hidden = HiddenUnitsForParameters(size);
    absl::StatusOr<SingleProcessRun> reference = MeasureSingleProcess(settings, hidden);
    if (!reference.ok()) return reference.status();
    absl::StatusOr<ThroughputWindow> window =
        MeasureCluster(settings, cluster, hidden, /*sync=*/false, settings.sweep_window);
    if (!window.ok()) return window.status();
    results.model_sweep.push_back({MlpShape(hidden), hidden, 2, *window, *reference});
  }
  return absl::OkStatus();
}

absl::Status RunWorkerSweep(ClusterBenchSettings& settings, ScalingResults& results) {
  absl::StatusOr<SingleProcessRun> reference = MeasureSingleProcess(settings, FashionMlp());
  if (!reference.ok()) return reference.status();
  for (int workers : settings.worker_counts) {
    absl::StatusOr<std::unique_ptr<BenchCluster>> cluster = StartCluster(settings, workers);
    if (!cluster.ok()) return cluster.status();
    absl::StatusOr<ThroughputWindow> window =
        MeasureCluster(settings, **cluster, FashionMlp(), /*sync=*/false, settings.sweep_window);
    if (!window.ok()) return window.status();
    if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) return stopped;
    results.worker_sweep.push_back(
        {absl::StrCat(workers), FashionMlp(), workers, *window, *reference});
  }
  return absl::OkStatus();
}

absl::Status RunShardSweep(ClusterBenchSettings& settings, ScalingResults& results) {
  if (settings.shard_counts.empty()) return absl::OkStatus();
  absl::StatusOr<SingleProcessRun> reference = MeasureSingleProcess(settings, FashionMlp());
  if (!reference.ok()) return reference.status();
  constexpr int kWorkers = 2;
  for (int shards : settings.shard_counts) {
    absl::StatusOr<std::unique_ptr<BenchCluster>> cluster =
        StartCluster(settings, kWorkers, {}, shards);
    if (!cluster.ok()) return cluster.status();
    absl::StatusOr<ThroughputWindow> window =
        MeasureCluster(settings, **cluster, FashionMlp(), /*sync=*/false, settings.sweep_window);
    if (!window.ok()) return window.status();
    if (absl::Status stopped = (*cluster)->Stop(); !stopped.ok()) return stopped;
    ThroughputPoint point{absl::StrCat(shards), FashionMlp(), kWorkers, *window, *reference};
    point.shards = shards;
    results.shard_sweep.push_back(std::move(point));
  }
  return absl::OkStatus();
}

void ProbeExchanges(const ClusterBenchSettings& settings, ScalingResults& results) {
  // Each probe starts and stops its shards and client: the hold keeps
  // gRPC's callback queue between them.
  const std::unique_ptr<CallbackQueueHold> hold = CallbackQueueHold::Start();
  std::set<int> counts(settings.shard_counts.begin(), settings.shard_counts.end());
  counts.insert(1);
  const WireModel mlp = MlpWireModel(FashionMlp());
  WireProbeOptions options;
  options.shm = true;
  options.seconds = 3;
  for (int shards : counts) {
    Progress(absl::StrCat("the MLP's push and pull apart, ", shards, " shard(s), lanes"));
    results.exchanges[shards] = MeasureWire(mlp, shards, options);
    Progress(absl::StrFormat("  %.3f ms a step, CPU %.3f ms", results.exchanges[shards].step_ms(),
                             results.exchanges[shards].cpu_ms()));
  }
  Progress("the MLP's push and pull apart, 1 shard, gRPC");
  options.shm = false;
  results.grpc_exchange = MeasureWire(mlp, 1, options);
  Progress(absl::StrFormat("  %.3f ms a step, CPU %.3f ms", results.grpc_exchange->step_ms(),
                           results.grpc_exchange->cpu_ms()));
}

// Across hosts: the shards the MLP needs by workers and link speed, from
// its step over gRPC, hosts of this one's cores.
void ShardsNeededSection(const ScalingResults& results, MarkdownReport& report) {
  if (!results.grpc_exchange.has_value()) return;
  const std::optional<StepCosts> costs = MlpStepCosts(results, *results.grpc_exchange);
  if (!costs.has_value()) return;
  const std::vector<double> gbits = {1, 10, 25, 100};
  std::vector<std::string> header = {"workers"};
  for (double g : gbits) header.push_back(absl::StrCat(g, " Gbit/s"));
  MarkdownTable table(header);
  for (int workers : {1, 4, 16, 64, 256}) {
    std::vector<std::string> row = {absl::StrCat(workers)};
    for (double g : gbits) {
      ClusterShape shape;
      shape.workers = workers;
      shape.batch = kBatch;
      shape.host_cores = HostCores();
      shape.link_bytes_per_second = g * 1e9 / 8;
      shape.model_bytes = results.grpc_exchange->bytes_per_step / 2.0;
      const int shards = ShardsNeeded(*costs, shape);
      shape.shards = shards > 0 ? shards : 64;
      const Prediction p = PredictThroughput(*costs, shape);
      row.push_back(shards > 0 ? absl::StrCat(shards, " (", Fixed(p.examples_per_second, 0), ")")
                               : absl::StrCat("over 64 (", p.limit, ")"));
    }
    table.AddRow(row);
  }
  report.SubHeading("Parameter servers the MLP needs across hosts (the sizing model)");
  report.Paragraph(absl::StrCat(
      "The fewest shards whose links and cores keep up with the workers (ShardsNeeded in "
      "bench/cluster/sizing_model.h), and in parentheses the examples/s the model then "
      "predicts: each worker and shard on a host of ",
      HostCores(),
      " cores with a link of that speed each way, the MLP's step costs of this run with its "
      "exchange over gRPC to 1 shard (the table above) for every shard count. Not measured: a "
      "prediction (docs/sizing.md)."));
  report.Table(table);
}

void AddScalingSections(const ScalingResults& results, MarkdownReport& report) {
  if (!results.model_sweep.empty()) ModelSweepSection(results, report);
  if (!results.worker_sweep.empty()) WorkerSweepSection(results, report);
  if (!results.shard_sweep.empty()) ShardSweepSection(results, report);
  if (!results.exchanges.empty()) ExchangeSection(results, report);
  ShardsNeededSection(results, report);
}

}  // namespace bench
}  // namespace pstrain
