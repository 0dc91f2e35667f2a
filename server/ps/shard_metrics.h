#ifndef PSTRAIN_SERVER_PS_SHARD_METRICS_H_
#define PSTRAIN_SERVER_PS_SHARD_METRICS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/ps/embedding_table.h"

namespace pstrain {

// The parameter server's Prometheus metrics, every name prefixed
// `pstrain_ps_`. Registered once in the process's registry, which must
// outlive this object. Thread-safe.
class ShardMetrics {
 public:
  explicit ShardMetrics(prometheus::Registry& registry);
  ~ShardMetrics();

  ShardMetrics(const ShardMetrics&) = delete;
  ShardMetrics& operator=(const ShardMetrics&) = delete;

  // Traffic, recorded by the service per complete push or pull.
  void RecordPush(int64_t bytes, absl::Duration latency);
  void RecordPull(int64_t bytes, absl::Duration latency);
  // Of those bytes, the ones that moved through shared-memory lanes;
  // direction: "push" or "pull".
  void RecordLaneBytes(absl::string_view direction, int64_t bytes);
  // A PushPull message that came on a lane's own connection rather than
  // the gRPC stream.
  void RecordLaneRequest();

  // Outcomes and work, recorded by the shard.
  void RecordApply(absl::Duration duration);
  void RecordStaleness(int64_t versions);
  // reason: "stale", "invalid_argument", "not_found", "aborted", ...
  void RecordRejected(absl::string_view reason);
  void RecordDedupHit();
  // Agreed sync rounds: a round committed; staged pushes dropped (the
  // round was committed without them, a newer incarnation of their worker
  // replaced them, or their lease was handed back).
  void RecordRoundCommitted();
  void RecordStagedDropped(int64_t pushes);
  void SetVersion(int64_t version);
  // Pushes applied in the job's current run, restored with its checkpoint
  // (AppliedPushLedger): equal on shards that applied the same pushes.
  void SetAppliedPushes(int64_t pushes);
  // The variables of the job this shard holds (dense and embedding) and the
  // bytes of them and their optimizer slots; 0, 0 once the job is dropped.
  void SetVariables(int count, int64_t bytes);

  // Hot-standby replicas: entries a primary forwarded to its backup, how
  // long an acknowledgement waited for the backup, entries a backup
  // applied, and the replica's role (ReplicaRole: 0 none, 1 primary,
  // 2 backup).
  void RecordForwarded(int64_t entries);
  void RecordReplicationWait(absl::Duration wait);
  void RecordReplicaApplied(int64_t entries);
  void SetReplicaRole(int role);

  // Embedding table gauges and counters, labelled variable="<name>";
  // `budget_bytes` is the table's max_bytes_per_shard (0: no budget).
  void SetEmbeddingStats(const std::string& table, const EmbeddingStats& stats,
                         int64_t budget_bytes);
  // Removes every table's series (the job was dropped).
  void ClearEmbeddingTables();

 private:
  struct Table {
    prometheus::Gauge* rows;
    prometheus::Gauge* bytes;
    prometheus::Gauge* budget_bytes;
    prometheus::Counter* admissions;
    prometheus::Counter* evictions;
    prometheus::Counter* dropped;
    EmbeddingStats last;
  };

  // Constant after construction: families and unlabelled series.
  prometheus::Counter& push_count_;
  prometheus::Counter& push_bytes_;
  prometheus::Histogram& push_latency_;
  prometheus::Counter& pull_count_;
  prometheus::Counter& pull_bytes_;
  prometheus::Histogram& pull_latency_;
  prometheus::Histogram& apply_seconds_;
  prometheus::Histogram& staleness_;
  prometheus::Family<prometheus::Counter>& rejected_;
  prometheus::Counter& dedup_hits_;
  prometheus::Counter& rounds_committed_;
  prometheus::Counter& staged_dropped_;
  prometheus::Family<prometheus::Counter>& lane_bytes_;
  prometheus::Counter& lane_requests_;
  prometheus::Gauge& version_;
  prometheus::Gauge& applied_pushes_;
  prometheus::Gauge& variables_;
  prometheus::Gauge& variable_bytes_;
  prometheus::Counter& forwarded_;
  prometheus::Histogram& replication_wait_;
  prometheus::Counter& replica_applied_;
  prometheus::Gauge& replica_role_;
  prometheus::Family<prometheus::Gauge>& table_rows_;
  prometheus::Family<prometheus::Gauge>& table_bytes_;
  prometheus::Family<prometheus::Gauge>& table_budget_bytes_;
  prometheus::Family<prometheus::Counter>& table_admissions_;
  prometheus::Family<prometheus::Counter>& table_evictions_;
  prometheus::Family<prometheus::Counter>& table_dropped_;

  absl::Mutex mu_;
  std::map<std::string, Table> tables_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_SHARD_METRICS_H_
