#ifndef PSTRAIN_BENCH_SPARSE_SPARSE_JOB_H_
#define PSTRAIN_BENCH_SPARSE_SPARSE_JOB_H_

// The job the sparse benchmark trains: wide-and-deep on synthetic click
// logs, async, over a dynamic embedding table sized by `vocabulary`.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace pstrain {

struct SparseJob {
  // Ids of the table: num_fields fields of vocabulary / num_fields ids each.
  int64_t vocabulary = 10000000;
  int32_t num_fields = 8;
  // Floats per row of deep/embedding (wide/weights has one per id).
  int32_t dim = 64;
  // The generator's Zipf exponent; it refuses <= 1. Close to 1 spreads the
  // draws over as many of the ids as it allows.
  double zipf_exponent = 1.0001;
  int64_t num_examples = 8000000;
  int32_t batch_size = 256;
  std::vector<int64_t> hidden_units = {64, 32};
  // "sgd" (no slot) or "adagrad" (one slot per value).
  std::string optimizer = "sgd";
  // Dynamic-table budget per shard, bytes of rows with their slots; the
  // benchmark sets it above what the table can hold so nothing is evicted.
  int64_t max_bytes_per_shard = 0;
  double max_seconds = 3600;

  // InvalidArgument naming the field: sizes <= 0, vocabulary not a multiple
  // of num_fields, an unknown optimizer.
  absl::Status Validate() const;
  // Optimizer slots per value: 0 for SGD, 1 for Adagrad.
  int SlotsPerValue() const;
  // Raw bytes of one id's rows on the shards: deep/embedding's dim floats
  // and wide/weights' one float, each with its optimizer slots.
  int64_t RawBytesPerId() const;
  // Bytes of deep/embedding values alone of one id (what a pull of it carries).
  int64_t DeepValueBytes() const { return int64_t{dim} * 4; }
  // Bytes a pull of one id carries: its deep row and its wide weight.
  int64_t PulledBytesPerId() const { return (int64_t{dim} + 1) * 4; }
  // Floats of the dense variables (hidden layers, logits, wide bias), which
  // a worker pulls whole every step.
  int64_t DenseFloats() const;
  // The JobSpec in text format, JOB_MODE_TRAIN, no export; checkpoints a
  // day apart (none is written while the benchmark measures).
  std::string Text() const;
};

}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SPARSE_SPARSE_JOB_H_
