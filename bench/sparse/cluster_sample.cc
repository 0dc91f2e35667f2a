#include "bench/sparse/cluster_sample.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "bench/common/metrics_page.h"
#include "bench/common/metrics_scrape.h"
#include "bench/common/process_cpu.h"
#include "bench/common/resident_memory.h"

namespace pstrain {
namespace {

using bench::MetricsPage;

// A counter every process exports from its start; the embedding series,
// which the job creates, read as 0 until then (MetricsPage::Sum).
absl::StatusOr<double> Counter(const MetricsPage& page, const LocalTask& task, const char* name) {
  if (!page.Has(name)) {
    return absl::NotFoundError(absl::StrCat(task.name(), ": no sample of ", name, " on the page"));
  }
  return page.Sum(name);
}

}  // namespace

namespace {

// One figure summed over the shards.
template <typename T>
T SumOverShards(const std::vector<ShardSample>& shards, T ShardSample::*figure) {
  T sum = 0;
  for (const ShardSample& s : shards) sum += s.*figure;
  return sum;
}

}  // namespace

double ClusterSample::DeepRows() const { return SumOverShards(shards, &ShardSample::deep_rows); }

double ClusterSample::WideRows() const { return SumOverShards(shards, &ShardSample::wide_rows); }

double ClusterSample::TableBytes() const {
  return SumOverShards(shards, &ShardSample::table_bytes);
}

double ClusterSample::Evictions() const { return SumOverShards(shards, &ShardSample::evictions); }

double ClusterSample::PullBytes() const { return SumOverShards(shards, &ShardSample::pull_bytes); }

int64_t ClusterSample::RssBytes() const { return SumOverShards(shards, &ShardSample::rss_bytes); }

absl::StatusOr<ClusterSample> SampleCluster(const LocalCluster& cluster) {
  ClusterSample sample;
  sample.time = absl::Now();
  for (const LocalTask& task : cluster.tasks()) {
    absl::StatusOr<double> cpu = bench::CpuSeconds(task.pid);
    if (!cpu.ok()) {
      return absl::UnavailableError(absl::StrCat(task.name(), ": ", cpu.status().message()));
    }
    if (task.role == "coordinator") sample.coordinator_cpu_seconds += *cpu;
    if (task.role == "ps") sample.ps_cpu_seconds += *cpu;
    if (task.role == "worker") sample.worker_cpu_seconds += *cpu;
    if (task.role != "ps" && task.role != "worker") continue;
    absl::StatusOr<MetricsPage> page = bench::ScrapeMetrics(task, absl::Seconds(10));
    if (!page.ok()) return page.status();
    if (task.role == "worker") {
      absl::StatusOr<double> examples = Counter(*page, task, "pstrain_worker_examples_total");
      if (!examples.ok()) return examples.status();
      absl::StatusOr<double> steps = Counter(*page, task, "pstrain_worker_steps_total");
      if (!steps.ok()) return steps.status();
      sample.examples += *examples;
      sample.steps += *steps;
      // Observed from the first step on: absent before it.
      sample.data_wait_seconds +=
          page->Sum("pstrain_worker_step_phase_seconds_sum", {{"phase", "data_wait"}});
      continue;
    }
    ShardSample shard;
    absl::StatusOr<int64_t> rss = bench::ResidentBytes(task.pid);
    if (!rss.ok()) {
      return absl::UnavailableError(absl::StrCat(task.name(), ": ", rss.status().message()));
    }
    shard.rss_bytes = *rss;
    absl::StatusOr<double> pulled = Counter(*page, task, "pstrain_ps_pull_bytes_total");
    if (!pulled.ok()) return pulled.status();
    shard.pull_bytes = *pulled;
    shard.deep_rows = page->Sum("pstrain_ps_embedding_rows", {{"variable", "deep/embedding"}});
    shard.wide_rows = page->Sum("pstrain_ps_embedding_rows", {{"variable", "wide/weights"}});
    shard.table_bytes = page->Sum("pstrain_ps_embedding_bytes");
    shard.evictions = page->Sum("pstrain_ps_embedding_evictions_total");
    sample.shards.push_back(shard);
  }
  return sample;
}

}  // namespace pstrain
