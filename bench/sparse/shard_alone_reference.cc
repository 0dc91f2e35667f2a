#include "bench/sparse/shard_alone_reference.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/sparse/resident_memory.h"
#include "common/clock/clock.h"
#include "prometheus/registry.h"
#include "server/ps/shard_store.h"

namespace pstrain {
namespace {

CreateVariablesRequest TableRequest(const SparseJob& job) {
  CreateVariablesRequest r;
  r.set_job_id("shard-alone");
  r.set_num_shards(1);
  r.set_num_workers(1);
  r.mutable_optimizer()->set_learning_rate(0.05f);
  if (job.optimizer == "adagrad") r.mutable_optimizer()->mutable_adagrad();
  VariableSpec* v = r.add_variables();
  v->set_name("deep/embedding");
  v->set_kind(VARIABLE_KIND_EMBEDDING);
  v->set_dtype(DATA_TYPE_FLOAT32);
  v->mutable_shape()->add_dims(0);  // dynamic
  v->mutable_shape()->add_dims(job.dim);
  return r;
}

double SecondsSince(absl::Time start) { return absl::ToDoubleSeconds(absl::Now() - start); }

}  // namespace

absl::StatusOr<ShardAloneFigures> MeasureShardAlone(const SparseJob& job, int64_t rows, int batch,
                                                    absl::Duration read_time) {
  ShardAloneFigures figures;
  figures.rows = rows;
  RealClock clock;
  prometheus::Registry registry;
  ShardStore store(ShardStoreOptions(), clock, registry);
  absl::StatusOr<CreateVariablesResponse> created = store.CreateVariables(TableRequest(job));
  if (!created.ok()) {
    return absl::InternalError(absl::StrCat("shard alone: table refused: ", created.status().ToString()));
  }
  absl::StatusOr<std::shared_ptr<ParameterShard>> shard = store.GetJob("shard-alone");
  if (!shard.ok()) return shard.status();

  // Rows are created by their first push, in shuffled order as the
  // workers' draws create them.
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  const int64_t rss_before = ResidentBytes(0).value_or(0);
  std::vector<float> grad(static_cast<size_t>(batch) * job.dim, 0.001f);
  uint64_t sequence = 0;
  absl::Time start = absl::Now();
  for (int64_t first = 0; first < rows; first += batch) {
    const int64_t n = std::min<int64_t>(batch, rows - first);
    absl::Span<const int64_t> ids(order.data() + first, static_cast<size_t>(n));
    PushReply reply = (*shard)->Push({0, 1, ++sequence}, 0,
                                     {GradientRef{0, true, ids, absl::MakeConstSpan(grad.data(), n * job.dim)}});
    if (reply.outcome != PUSH_OUTCOME_APPLIED) {
      return absl::InternalError(absl::StrCat("shard alone: push of new rows not applied: ",
                                              reply.status.ToString()));
    }
  }
  figures.created_rows_per_sec = rows / SecondsSince(start);
  const int64_t rss_after = ResidentBytes(0).value_or(0);
  figures.rss_bytes_per_row = static_cast<double>(rss_after - rss_before) / rows;

  std::uniform_int_distribution<int64_t> pick(0, rows - 1);
  std::vector<std::vector<int64_t>> batches(64, std::vector<int64_t>(batch));
  for (auto& b : batches) {
    for (int64_t& id : b) id = pick(rng);
  }
  std::vector<float> out(grad.size());
  int64_t read = 0;
  start = absl::Now();
  const absl::Time end = start + read_time;
  while (absl::Now() < end) {
    for (const auto& b : batches) {
      absl::Status s = (*shard)->ReadRows(0, b, out.data());
      if (!s.ok()) return absl::InternalError(absl::StrCat("shard alone: ReadRows: ", s.ToString()));
      read += batch;
    }
  }
  figures.read_rows_per_sec = read / SecondsSince(start);
  return figures;
}

}  // namespace pstrain
