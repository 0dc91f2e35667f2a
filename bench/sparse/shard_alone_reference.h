#ifndef PSTRAIN_BENCH_SPARSE_SHARD_ALONE_REFERENCE_H_
#define PSTRAIN_BENCH_SPARSE_SHARD_ALONE_REFERENCE_H_

// The references the cluster's rows/s and bytes per row are set against,
// measured in the benchmark's own process: one parameter shard (the same
// ShardStore and ParameterShard code as pstrain-ps, no gRPC) holding a
// dynamic table of the job's row width and optimizer.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/sparse/sparse_job.h"

namespace pstrain {

struct ShardAloneFigures {
  int64_t rows = 0;
  // Rows created per second by pushes of new ids (one thread).
  double created_rows_per_sec = 0;
  // Rows read per second by ReadRows of random held ids (one thread).
  double read_rows_per_sec = 0;
  // This process's VmRSS growth while the rows were created, per row: of
  // the deep/embedding table (job.dim floats) and then of wide/weights (1).
  double rss_bytes_per_row = 0;
  double wide_rss_bytes_per_row = 0;
};

// Creates the job's two dynamic tables on one shard (deep/embedding of
// job.dim floats, wide/weights of one, with job.optimizer's slots), pushes
// `rows` new ids (0..rows-1 in a shuffled order) into the first and then
// into the second, then reads batches of `batch` random held ids of the
// first for `read_time`. The tables are freed before returning.
// Internal: the shard refused the table or a push (the message says why).
absl::StatusOr<ShardAloneFigures> MeasureShardAlone(const SparseJob& job, int64_t rows, int batch,
                                                    absl::Duration read_time);

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SPARSE_SHARD_ALONE_REFERENCE_H_
