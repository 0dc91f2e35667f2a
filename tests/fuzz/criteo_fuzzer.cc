// Fuzzes the Criteo reader: the bytes as the text of a Criteo TSV file
// (common/data/criteo_reader.h), parsed whole and streamed through a line
// index in blocks of three lines (streamed_source.h). Besides "no crash",
// checks what a user relies on: a refusal is InvalidArgument naming the
// file and the line; text that parses gives one example per non-blank
// line, 13 dense features that are finite and not negative (log(1 + x) of
// x >= 0), exactly 26 ids per example inside the hash buckets, labels 0 or
// 1, and every example reads; streaming refuses with the same message, or
// gives the same examples.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/posix_env.h"
#include "common/data/criteo_reader.h"
#include "common/data/streamed_source.h"
#include "glog/logging.h"
#include "tests/fuzz/input_file.h"
#include "tests/fuzz/quiet_logs.h"

namespace {

constexpr int64_t kHashBuckets = 97;

// The input streamed: refused as `parsed` was, or the same examples.
void CheckStreamed(const std::string& path, const absl::Status& parsed,
                   const pstrain::ExampleSource* whole) {
  using namespace pstrain;
  PosixEnv env;
  CriteoSource spec;
  spec.add_paths(path);
  spec.set_hash_buckets(kHashBuckets);
  StreamingOptions streaming;
  streaming.block_records = 3;
  streaming.window_blocks = 2;
  streaming.save_indexes = false;
  absl::StatusOr<std::unique_ptr<StreamedSource>> streamed =
      StreamedSource::Open(env, CriteoRecordFormat(spec), streaming);
  if (!parsed.ok()) {
    CHECK(!streamed.ok());
    CHECK_EQ(streamed.status().message(), parsed.message());
    return;
  }
  if (whole == nullptr) {  // no lines
    CHECK(absl::IsInvalidArgument(streamed.status())) << streamed.status();
    return;
  }
  CHECK(streamed.ok()) << streamed.status();
  CHECK_EQ((*streamed)->info().DebugString(), whole->info().DebugString());
  std::vector<int64_t> all(static_cast<size_t>(whole->num_examples()));
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch expected, read;
  CHECK(whole->Fill(all, &expected).ok());
  CHECK((*streamed)->Fill(all, &read).ok());
  CHECK(read.labels == expected.labels);
  CHECK(read.sparse_ids == expected.sparse_ids);
  CHECK(read.row_splits == expected.row_splits);
  for (int64_t i = 0; i < read.dense.num_elements(); ++i) {
    CHECK_EQ(read.dense.data<float>()[i], expected.dense.data<float>()[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pstrain;
  fuzz::QuietLogs();
  const std::string path = fuzz::WriteInputFile("day_0.tsv", data, size);
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  InMemorySource::Examples examples;
  const absl::Status parsed = ParseCriteo(text, path, kHashBuckets, &examples);
  if (!parsed.ok()) {
    CHECK(absl::IsInvalidArgument(parsed)) << parsed;
    CHECK(absl::StartsWith(parsed.message(), path + ":")) << parsed;
    CheckStreamed(path, parsed, nullptr);
    return 0;
  }
  int64_t lines = 0;
  for (absl::string_view rest = text; !rest.empty();) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    absl::string_view line = rest.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) ++lines;
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  CHECK_EQ(examples.num_examples, lines);
  if (lines == 0) {
    CheckStreamed(path, parsed, nullptr);
    return 0;
  }
  absl::StatusOr<std::unique_ptr<InMemorySource>> source =
      InMemorySource::Create(std::move(examples));
  CHECK(source.ok()) << source.status();
  const DatasetInfo& info = (*source)->info();
  CHECK_EQ(info.dense_dim, kCriteoIntegerFeatures);
  CHECK_EQ(info.num_fields, kCriteoCategoricalFeatures);
  CHECK_EQ(info.sparse_dim, kHashBuckets);
  std::vector<int64_t> all(static_cast<size_t>(info.num_examples));
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch batch;
  CHECK((*source)->Fill(all, &batch).ok());
  CHECK_EQ(batch.sparse_ids.size(), all.size() * kCriteoCategoricalFeatures);
  for (int64_t id : batch.sparse_ids) CHECK(id >= 0 && id < kHashBuckets) << id;
  for (int64_t i = 0; i < batch.dense.num_elements(); ++i) {
    const float x = batch.dense.data<float>()[i];
    CHECK(std::isfinite(x) && x >= 0) << x;
  }
  for (float label : batch.labels) CHECK(label == 0 || label == 1) << label;
  CheckStreamed(path, parsed, source->get());
  return 0;
}
