#include "bench/sparse/cluster_sample.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "bench/sparse/process_cpu.h"
#include "bench/sparse/prometheus_sample.h"
#include "bench/sparse/resident_memory.h"
#include "common/net/http_get.h"

namespace pstrain {
namespace {

constexpr char kDeep[] = "variable=\"deep/embedding\"";
constexpr char kWide[] = "variable=\"wide/weights\"";

absl::StatusOr<std::string> MetricsPage(const LocalTask& task) {
  absl::StatusOr<std::string> page = HttpGet(task.metrics_address, "/metrics", absl::Seconds(10));
  if (!page.ok()) {
    return absl::UnavailableError(
        absl::StrCat("reading /metrics of ", task.name(), ": ", page.status().message()));
  }
  return page;
}

// A series the job creates: 0 until it exists.
double TableSeries(const std::string& page, const char* name, const char* label = "") {
  return SumSamples(page, name, label).value_or(0);
}

absl::StatusOr<double> Counter(const std::string& page, const LocalTask& task, const char* name) {
  absl::StatusOr<double> value = SumSamples(page, name);
  if (!value.ok()) {
    return absl::NotFoundError(absl::StrCat(task.name(), ": ", value.status().message()));
  }
  return value;
}

}  // namespace

double ClusterSample::DeepRows() const {
  double sum = 0;
  for (const ShardSample& s : shards) sum += s.deep_rows;
  return sum;
}

double ClusterSample::WideRows() const {
  double sum = 0;
  for (const ShardSample& s : shards) sum += s.wide_rows;
  return sum;
}

double ClusterSample::TableBytes() const {
  double sum = 0;
  for (const ShardSample& s : shards) sum += s.table_bytes;
  return sum;
}

double ClusterSample::Evictions() const {
  double sum = 0;
  for (const ShardSample& s : shards) sum += s.evictions;
  return sum;
}

double ClusterSample::PullBytes() const {
  double sum = 0;
  for (const ShardSample& s : shards) sum += s.pull_bytes;
  return sum;
}

int64_t ClusterSample::RssBytes() const {
  int64_t sum = 0;
  for (const ShardSample& s : shards) sum += s.rss_bytes;
  return sum;
}

absl::StatusOr<ClusterSample> SampleCluster(const LocalCluster& cluster) {
  ClusterSample sample;
  sample.time = absl::Now();
  for (const LocalTask& task : cluster.tasks()) {
    absl::StatusOr<double> cpu = CpuSeconds(task.pid);
    if (!cpu.ok()) {
      return absl::UnavailableError(absl::StrCat(task.name(), ": ", cpu.status().message()));
    }
    if (task.role == "coordinator") sample.coordinator_cpu_seconds += *cpu;
    if (task.role == "ps") sample.ps_cpu_seconds += *cpu;
    if (task.role == "worker") sample.worker_cpu_seconds += *cpu;
    if (task.role != "ps" && task.role != "worker") continue;
    absl::StatusOr<std::string> page = MetricsPage(task);
    if (!page.ok()) return page.status();
    if (task.role == "worker") {
      absl::StatusOr<double> examples = Counter(*page, task, "pstrain_worker_examples_total");
      if (!examples.ok()) return examples.status();
      absl::StatusOr<double> steps = Counter(*page, task, "pstrain_worker_steps_total");
      if (!steps.ok()) return steps.status();
      sample.examples += *examples;
      sample.steps += *steps;
      continue;
    }
    ShardSample shard;
    absl::StatusOr<int64_t> rss = ResidentBytes(task.pid);
    if (!rss.ok()) {
      return absl::UnavailableError(absl::StrCat(task.name(), ": ", rss.status().message()));
    }
    shard.rss_bytes = *rss;
    absl::StatusOr<double> pulled = Counter(*page, task, "pstrain_ps_pull_bytes_total");
    if (!pulled.ok()) return pulled.status();
    shard.pull_bytes = *pulled;
    shard.deep_rows = TableSeries(*page, "pstrain_ps_embedding_rows", kDeep);
    shard.wide_rows = TableSeries(*page, "pstrain_ps_embedding_rows", kWide);
    shard.table_bytes = TableSeries(*page, "pstrain_ps_embedding_bytes");
    shard.evictions = TableSeries(*page, "pstrain_ps_embedding_evictions_total");
    sample.shards.push_back(shard);
  }
  return sample;
}

}  // namespace pstrain
