// Fuzzes the TFRecord readers: the bytes as a TFRecord file of tf.Example,
// plain or gzipped (found by its first bytes), as a job's data, loaded
// whole (common/data/tfrecord_reader.h) and streamed through an index in
// blocks of three records (streamed_source.h; a gzipped file through its
// access points), then again with the same bytes in place of the index
// beside the file. Besides
// "no crash", checks what a user relies on: a refusal is InvalidArgument or
// DataLoss naming the file; data that loads has the shape the source spec
// gives it, every example of it readable; and streaming gives what loading
// gives, or refuses what it refuses.

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/file_patterns.h"
#include "common/data/streamed_source.h"
#include "common/data/tfrecord_format.h"
#include "common/data/tfrecord_reader.h"
#include "glog/logging.h"
#include "tests/fuzz/input_file.h"
#include "tests/fuzz/quiet_logs.h"

namespace {

constexpr int64_t kHashBuckets = 97;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pstrain;
  fuzz::QuietLogs();
  const std::string path = fuzz::WriteInputFile("tfrecord_fuzz.tfrecord", data, size);
  // The features make_seed_corpus's seeds hold.
  TfRecordSource spec;
  spec.add_paths(path);
  spec.add_dense_features("dense");
  spec.add_sparse_features("field_0");
  spec.add_sparse_features("field_1");
  spec.set_hash_buckets(kHashBuckets);
  spec.set_label("label");
  PosixEnv env;
  absl::StatusOr<std::unique_ptr<InMemorySource>> source = LoadTfRecord(env, spec);
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  {
    StreamingOptions streaming;
    streaming.block_records = 3;
    streaming.window_blocks = 2;
    for (bool damaged_index : {false, true}) {
      if (damaged_index) {
        std::ofstream index(RecordIndexPath(path), std::ios::binary | std::ios::trunc);
        index.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
      }
      absl::StatusOr<std::unique_ptr<StreamedSource>> streamed =
          StreamedSource::Open(env, TfRecordFormat(spec), streaming);
      if (gzip) {
        // A damaged gzip stream may show first as a gzip error (loading
        // inflates ahead of the records) or as a record's bad CRC
        // (streaming's index build stops at each deflate block): either
        // refusal, but a refusal.
        CHECK_EQ(streamed.ok(), source.ok()) << streamed.status() << " / " << source.status();
        CHECK(streamed.ok() || absl::StrContains(streamed.status().message(), path))
            << streamed.status();
      } else {
        CHECK_EQ(streamed.status().code(), source.status().code()) << streamed.status();
      }
      if (!source.ok()) continue;
      CHECK_EQ((*streamed)->info().DebugString(), (*source)->info().DebugString());
      std::vector<int64_t> all(static_cast<size_t>((*source)->num_examples()));
      std::iota(all.begin(), all.end(), 0);
      ExampleBatch loaded, read;
      CHECK((*source)->Fill(all, &loaded).ok());
      CHECK((*streamed)->Fill(all, &read).ok());
      CHECK(read.labels == loaded.labels);
      CHECK(read.sparse_ids == loaded.sparse_ids);
      CHECK(read.row_splits == loaded.row_splits);
      CHECK_EQ(read.dense.num_elements(), loaded.dense.num_elements());
      for (int64_t i = 0; i < read.dense.num_elements(); ++i) {
        CHECK_EQ(read.dense.data<float>()[i], loaded.dense.data<float>()[i]);
      }
    }
  }
  if (!source.ok()) {
    const absl::StatusCode code = source.status().code();
    CHECK(code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kDataLoss)
        << source.status();
    CHECK(absl::StrContains(source.status().message(), path)) << source.status();
    return 0;
  }
  const DatasetInfo& info = (*source)->info();
  CHECK_GT(info.num_examples, 0);
  CHECK_EQ(info.sparse_dim, kHashBuckets);
  CHECK(info.num_fields == 0 || info.num_fields == 2) << info.num_fields;
  std::vector<int64_t> all(static_cast<size_t>(info.num_examples));
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch batch;
  CHECK((*source)->Fill(all, &batch).ok());
  CHECK_EQ(batch.size, info.num_examples);
  CHECK_EQ(batch.dense_dim(), info.dense_dim);
  for (int64_t id : batch.sparse_ids) CHECK(id >= 0 && id < kHashBuckets) << id;
  return 0;
}
