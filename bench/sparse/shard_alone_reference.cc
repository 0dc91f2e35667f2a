#include "bench/sparse/shard_alone_reference.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/common/resident_memory.h"
#include "common/clock/clock.h"
#include "prometheus/registry.h"
#include "server/ps/shard_store.h"

namespace pstrain {
namespace {

double SecondsSince(absl::Time start) { return absl::ToDoubleSeconds(absl::Now() - start); }

CreateVariablesRequest TableRequest(const SparseJob& job) {
  CreateVariablesRequest r;
  r.set_job_id("shard-alone");
  r.set_num_shards(1);
  r.set_num_workers(1);
  r.mutable_optimizer()->set_learning_rate(0.05f);
  if (job.optimizer == "adagrad") r.mutable_optimizer()->mutable_adagrad();
  // The job's two tables: deep/embedding (variable 0) and wide/weights (1).
  for (const int64_t dim : {int64_t{job.dim}, int64_t{1}}) {
    VariableSpec* v = r.add_variables();
    v->set_name(dim == 1 ? "wide/weights" : "deep/embedding");
    v->set_kind(VARIABLE_KIND_EMBEDDING);
    v->set_dtype(DATA_TYPE_FLOAT32);
    v->mutable_shape()->add_dims(0);  // dynamic
    v->mutable_shape()->add_dims(dim);
  }
  return r;
}

// Creates a row of variable `variable` (of `dim` floats) for each id of
// `order` by pushes of `batch` ids; the rows created per second.
absl::StatusOr<double> CreateRows(ParameterShard& shard, int variable, int64_t dim,
                                  const std::vector<int64_t>& order, int batch,
                                  uint64_t* sequence) {
  std::vector<float> grad(static_cast<size_t>(batch) * dim, 0.001f);
  const absl::Time start = absl::Now();
  const int64_t rows = static_cast<int64_t>(order.size());
  for (int64_t first = 0; first < rows; first += batch) {
    const int64_t n = std::min<int64_t>(batch, rows - first);
    absl::Span<const int64_t> ids(order.data() + first, static_cast<size_t>(n));
    PushReply reply =
        shard.Push({0, 1, ++*sequence}, 0,
                   {GradientRef{variable, true, ids, absl::MakeConstSpan(grad.data(), n * dim)}});
    if (reply.outcome != PUSH_OUTCOME_APPLIED) {
      return absl::InternalError(
          absl::StrCat("shard alone: push of new rows not applied: ", reply.status.ToString()));
    }
  }
  return rows / SecondsSince(start);
}

}  // namespace

absl::StatusOr<ShardAloneFigures> MeasureShardAlone(const SparseJob& job, int64_t rows, int batch,
                                                    absl::Duration read_time) {
  ShardAloneFigures figures;
  figures.rows = rows;
  RealClock clock;
  prometheus::Registry registry;
  ShardStore store(ShardStoreOptions(), clock, registry);
  absl::StatusOr<CreateVariablesResponse> tables = store.CreateVariables(TableRequest(job));
  if (!tables.ok()) {
    return absl::InternalError(
        absl::StrCat("shard alone: tables refused: ", tables.status().ToString()));
  }
  absl::StatusOr<std::shared_ptr<ParameterShard>> shard = store.GetJob("shard-alone");
  if (!shard.ok()) return shard.status();

  // Rows are created by their first push, in shuffled order as the
  // workers' draws create them.
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  uint64_t sequence = 0;
  int64_t rss_before = bench::ResidentBytes(0).value_or(0);
  absl::StatusOr<double> created = CreateRows(**shard, 0, job.dim, order, batch, &sequence);
  if (!created.ok()) return created.status();
  figures.created_rows_per_sec = *created;
  int64_t rss_after = bench::ResidentBytes(0).value_or(0);
  figures.rss_bytes_per_row = static_cast<double>(rss_after - rss_before) / rows;
  rss_before = rss_after;
  created = CreateRows(**shard, 1, 1, order, batch, &sequence);
  if (!created.ok()) return created.status();
  rss_after = bench::ResidentBytes(0).value_or(0);
  figures.wide_rss_bytes_per_row = static_cast<double>(rss_after - rss_before) / rows;

  std::uniform_int_distribution<int64_t> pick(0, rows - 1);
  std::vector<std::vector<int64_t>> batches(64, std::vector<int64_t>(batch));
  for (auto& b : batches) {
    for (int64_t& id : b) id = pick(rng);
  }
  std::vector<float> out(static_cast<size_t>(batch) * job.dim);
  int64_t read = 0;
  const absl::Time start = absl::Now();
  const absl::Time end = start + read_time;
  while (absl::Now() < end) {
    for (const auto& b : batches) {
      absl::Status s = (*shard)->ReadRows(0, b, out.data());
      if (!s.ok())
        return absl::InternalError(absl::StrCat("shard alone: ReadRows: ", s.ToString()));
      read += batch;
    }
  }
  figures.read_rows_per_sec = read / SecondsSince(start);
  return figures;
}

}  // namespace pstrain
