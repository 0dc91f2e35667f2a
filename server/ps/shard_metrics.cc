#include "server/ps/shard_metrics.h"

namespace pstrain {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// 100 us .. ~13 s, doubling.
Histogram::BucketBoundaries LatencyBuckets() {
  Histogram::BucketBoundaries b;
  for (double s = 1e-4; s < 15; s *= 2) b.push_back(s);
  return b;
}

}  // namespace

ShardMetrics::ShardMetrics(prometheus::Registry& registry)
    : push_count_(BuildCounter()
                      .Name("pstrain_ps_pushes_total")
                      .Help("Complete pushes received, whatever their outcome.")
                      .Register(registry)
                      .Add({})),
      push_bytes_(BuildCounter()
                      .Name("pstrain_ps_push_bytes_total")
                      .Help("Gradient bytes received in pushes.")
                      .Register(registry)
                      .Add({})),
      push_latency_(BuildHistogram()
                        .Name("pstrain_ps_push_latency_seconds")
                        .Help("From a push's first message to its outcome.")
                        .Register(registry)
                        .Add({}, LatencyBuckets())),
      pull_count_(BuildCounter()
                      .Name("pstrain_ps_pulls_total")
                      .Help("Pulls answered.")
                      .Register(registry)
                      .Add({})),
      pull_bytes_(BuildCounter()
                      .Name("pstrain_ps_pull_bytes_total")
                      .Help("Parameter bytes sent in pulls.")
                      .Register(registry)
                      .Add({})),
      pull_latency_(BuildHistogram()
                        .Name("pstrain_ps_pull_latency_seconds")
                        .Help("From a pull's request to its last message queued.")
                        .Register(registry)
                        .Add({}, LatencyBuckets())),
      apply_seconds_(BuildHistogram()
                         .Name("pstrain_ps_apply_seconds")
                         .Help("Time to apply one update (a push or a sync round's mean).")
                         .Register(registry)
                         .Add({}, LatencyBuckets())),
      staleness_(BuildHistogram()
                     .Name("pstrain_ps_push_staleness_versions")
                     .Help("Versions between a push's base_version and the shard's version.")
                     .Register(registry)
                     .Add({}, Histogram::BucketBoundaries{0, 1, 2, 4, 8, 16, 32, 64, 128})),
      rejected_(BuildCounter()
                    .Name("pstrain_ps_rejected_pushes_total")
                    .Help("Pushes not applied, by reason (stale, invalid_argument, ...).")
                    .Register(registry)),
      dedup_hits_(BuildCounter()
                      .Name("pstrain_ps_dedup_hits_total")
                      .Help("Retried pushes recognised as already decided.")
                      .Register(registry)
                      .Add({})),
      rounds_committed_(BuildCounter()
                            .Name("pstrain_ps_rounds_committed_total")
                            .Help("Agreed sync rounds the coordinator committed on this shard.")
                            .Register(registry)
                            .Add({})),
      staged_dropped_(BuildCounter()
                          .Name("pstrain_ps_staged_pushes_dropped_total")
                          .Help("Pushes staged for an agreed sync round and never applied: the "
                                "round was committed without them (late), a restarted worker "
                                "replaced them, or their lease was handed back.")
                          .Register(registry)
                          .Add({})),
      lane_bytes_(BuildCounter()
                      .Name("pstrain_ps_lane_bytes_total")
                      .Help("Tensor bytes of pushes and pulls that moved through shared-memory "
                            "lanes with workers on this host instead of gRPC messages, by "
                            "direction (push, pull).")
                      .Register(registry)),
      lane_requests_(BuildCounter()
                         .Name("pstrain_ps_lane_requests_total")
                         .Help("PushPull messages (push parts, pulls) that came on shared-memory "
                               "lanes' own connections instead of gRPC streams.")
                         .Register(registry)
                         .Add({})),
      version_(BuildGauge()
                   .Name("pstrain_ps_version")
                   .Help("Updates applied on this shard (its parameter version).")
                   .Register(registry)
                   .Add({})),
      applied_pushes_(BuildGauge()
                          .Name("pstrain_ps_applied_pushes")
                          .Help("Pushes applied in the job's current run, restored with its "
                                "checkpoint; equal on shards that applied the same pushes.")
                          .Register(registry)
                          .Add({})),
      variables_(BuildGauge()
                     .Name("pstrain_ps_variables")
                     .Help("Variables (dense and embedding tables) of the job this shard "
                           "holds a part of.")
                     .Register(registry)
                     .Add({})),
      variable_bytes_(BuildGauge()
                          .Name("pstrain_ps_variable_bytes")
                          .Help("Bytes of variables and optimizer slots held.")
                          .Register(registry)
                          .Add({})),
      forwarded_(BuildCounter()
                     .Name("pstrain_ps_replica_forwarded_total")
                     .Help("Decisions a primary forwarded to its backup.")
                     .Register(registry)
                     .Add({})),
      replication_wait_(BuildHistogram()
                            .Name("pstrain_ps_replication_wait_seconds")
                            .Help("How long an acknowledgement waited for the backup.")
                            .Register(registry)
                            .Add({}, LatencyBuckets())),
      replica_applied_(BuildCounter()
                           .Name("pstrain_ps_replica_applied_total")
                           .Help("Forwarded decisions a backup applied.")
                           .Register(registry)
                           .Add({})),
      replica_role_(BuildGauge()
                        .Name("pstrain_ps_replica_role")
                        .Help("This replica's role: 0 no replicas, 1 primary, 2 backup.")
                        .Register(registry)
                        .Add({})),
      table_rows_(BuildGauge()
                      .Name("pstrain_ps_embedding_rows")
                      .Help("Rows an embedding table holds on this shard.")
                      .Register(registry)),
      table_bytes_(BuildGauge()
                       .Name("pstrain_ps_embedding_bytes")
                       .Help("Bytes of an embedding table's rows and slots on this shard.")
                       .Register(registry)),
      table_budget_bytes_(BuildGauge()
                              .Name("pstrain_ps_embedding_budget_bytes")
                              .Help("The byte budget of a dynamic embedding table on this shard "
                                    "(max_bytes_per_shard; 0: none); past it rows are evicted.")
                              .Register(registry)),
      table_admissions_(BuildCounter()
                            .Name("pstrain_ps_embedding_admissions_total")
                            .Help("Ids given a row in a dynamic embedding table.")
                            .Register(registry)),
      table_evictions_(BuildCounter()
                           .Name("pstrain_ps_embedding_evictions_total")
                           .Help("Rows evicted from a dynamic table to stay in its budget.")
                           .Register(registry)),
      table_dropped_(BuildCounter()
                         .Name("pstrain_ps_embedding_dropped_updates_total")
                         .Help("Gradient rows dropped because their id was not admitted yet.")
                         .Register(registry)) {}

ShardMetrics::~ShardMetrics() { ClearEmbeddingTables(); }

void ShardMetrics::RecordPush(int64_t bytes, absl::Duration latency) {
  push_count_.Increment();
  push_bytes_.Increment(static_cast<double>(bytes));
  push_latency_.Observe(absl::ToDoubleSeconds(latency));
}

void ShardMetrics::RecordLaneBytes(absl::string_view direction, int64_t bytes) {
  lane_bytes_.Add({{"direction", std::string(direction)}}).Increment(static_cast<double>(bytes));
}

void ShardMetrics::RecordLaneRequest() { lane_requests_.Increment(); }

void ShardMetrics::RecordPull(int64_t bytes, absl::Duration latency) {
  pull_count_.Increment();
  pull_bytes_.Increment(static_cast<double>(bytes));
  pull_latency_.Observe(absl::ToDoubleSeconds(latency));
}

void ShardMetrics::RecordApply(absl::Duration duration) {
  apply_seconds_.Observe(absl::ToDoubleSeconds(duration));
}

void ShardMetrics::RecordStaleness(int64_t versions) {
  staleness_.Observe(static_cast<double>(versions));
}

void ShardMetrics::RecordRejected(absl::string_view reason) {
  rejected_.Add({{"reason", std::string(reason)}}).Increment();
}

void ShardMetrics::RecordDedupHit() { dedup_hits_.Increment(); }

void ShardMetrics::RecordRoundCommitted() { rounds_committed_.Increment(); }

void ShardMetrics::RecordStagedDropped(int64_t pushes) {
  if (pushes > 0) staged_dropped_.Increment(static_cast<double>(pushes));
}

void ShardMetrics::SetVersion(int64_t version) { version_.Set(static_cast<double>(version)); }

void ShardMetrics::SetAppliedPushes(int64_t pushes) {
  applied_pushes_.Set(static_cast<double>(pushes));
}

void ShardMetrics::RecordForwarded(int64_t entries) {
  forwarded_.Increment(static_cast<double>(entries));
}

void ShardMetrics::RecordReplicationWait(absl::Duration wait) {
  replication_wait_.Observe(absl::ToDoubleSeconds(wait));
}

void ShardMetrics::RecordReplicaApplied(int64_t entries) {
  replica_applied_.Increment(static_cast<double>(entries));
}

void ShardMetrics::SetReplicaRole(int role) { replica_role_.Set(role); }

void ShardMetrics::SetVariables(int count, int64_t bytes) {
  variables_.Set(count);
  variable_bytes_.Set(static_cast<double>(bytes));
}

void ShardMetrics::SetEmbeddingStats(const std::string& table, const EmbeddingStats& stats,
                                     int64_t budget_bytes) {
  absl::MutexLock l(&mu_);
  auto it = tables_.find(table);
  if (it == tables_.end()) {
    const prometheus::Labels labels{{"variable", table}};
    Table t{&table_rows_.Add(labels),
            &table_bytes_.Add(labels),
            &table_budget_bytes_.Add(labels),
            &table_admissions_.Add(labels),
            &table_evictions_.Add(labels),
            &table_dropped_.Add(labels),
            EmbeddingStats()};
    it = tables_.emplace(table, t).first;
  }
  Table& t = it->second;
  t.rows->Set(static_cast<double>(stats.rows));
  t.bytes->Set(static_cast<double>(stats.bytes));
  t.budget_bytes->Set(static_cast<double>(budget_bytes));
  // Counters only go up; a table replaced by a restore keeps counting on.
  auto add = [](prometheus::Counter* c, int64_t now, int64_t before) {
    if (now > before) c->Increment(static_cast<double>(now - before));
  };
  add(t.admissions, stats.admissions, t.last.admissions);
  add(t.evictions, stats.evictions, t.last.evictions);
  add(t.dropped, stats.dropped_updates, t.last.dropped_updates);
  t.last = stats;
}

void ShardMetrics::ClearEmbeddingTables() {
  absl::MutexLock l(&mu_);
  for (auto& [name, t] : tables_) {
    table_rows_.Remove(t.rows);
    table_bytes_.Remove(t.bytes);
    table_budget_bytes_.Remove(t.budget_bytes);
    table_admissions_.Remove(t.admissions);
    table_evictions_.Remove(t.evictions);
    table_dropped_.Remove(t.dropped);
  }
  tables_.clear();
}

}  // namespace pstrain
