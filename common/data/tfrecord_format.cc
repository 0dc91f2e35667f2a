#include "common/data/tfrecord_format.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/tf_example_decoder.h"
#include "common/data/tfrecord_file.h"
#include "common/status/status_macros.h"
#include "common/summary/record_reader.h"

namespace pstrain {
namespace {

class TfExampleRecordDecoder : public RecordDecoder {
 public:
  TfExampleRecordDecoder(const TfRecordSource& spec, const RecordSummary* expected)
      : decoder_(spec) {
    if (expected != nullptr) decoder_.ExpectDenseWidths(expected->dense_widths);
  }
  absl::Status Append(absl::string_view record, InMemorySource::Examples* examples) override {
    return decoder_.Append(record, examples);
  }
  std::vector<int64_t> dense_widths() const override { return decoder_.dense_widths(); }
  bool one_id_per_field() const override { return decoder_.one_id_per_field(); }

 private:
  TfExampleDecoder decoder_;
};

class TfRecordFormatImpl : public RecordFormat {
 public:
  explicit TfRecordFormatImpl(TfRecordSource spec) : spec_(std::move(spec)) {}

  absl::string_view name() const override { return "tfrecord"; }
  std::vector<std::string> patterns() const override {
    return {spec_.paths().begin(), spec_.paths().end()};
  }
  // The decoding options (features, label, hash buckets), not the paths or
  // the compression.
  std::string DecodingKey() const override {
    TfRecordSource decoding = spec_;
    decoding.clear_paths();
    decoding.clear_compression();
    decoding.set_hash_buckets(HashBucketsOf(spec_));
    return decoding.ShortDebugString();
  }

  absl::StatusOr<bool> IsGzipped(Env& env, const std::string& path) const override {
    return IsGzippedTfRecord(env, path, spec_.compression());
  }

  absl::Status Scan(SequentialFile& file, const std::string& path,
                    RecordVisitor visit) const override {
    return ForEachTfRecordIn(
        file, path, TfRecordSpan{},
        [&](absl::string_view record, int64_t, int64_t offset) { return visit(record, offset); });
  }

  absl::Status Split(absl::string_view bytes, int64_t offset, RecordVisitor visit) const override {
    const int64_t max_record_bytes = RecordReaderOptions().max_record_bytes;
    while (!bytes.empty()) {
      absl::string_view record;
      size_t framed = 0;
      const absl::Status unframed = UnframeRecord(bytes, max_record_bytes, &record, &framed);
      if (!unframed.ok()) {
        return absl::DataLossError(
            absl::StrCat("record at offset ", offset, ": ", unframed.message()));
      }
      RETURN_IF_ERROR(visit(record, offset));
      bytes.remove_prefix(framed);
      offset += static_cast<int64_t>(framed);
    }
    return absl::OkStatus();
  }

  std::unique_ptr<RecordDecoder> NewDecoder(const RecordSummary* expected) const override {
    return std::make_unique<TfExampleRecordDecoder>(spec_, expected);
  }

  void Describe(const RecordSummary& summary, DatasetInfo* info) const override {
    if (!spec_.sparse_features().empty()) {
      info->sparse_dim = HashBucketsOf(spec_);
      info->num_fields = summary.one_id_per_field ? spec_.sparse_features_size() : 0;
    }
    info->num_classes = summary.num_classes;
  }

 private:
  const TfRecordSource spec_;
};

}  // namespace

std::unique_ptr<const RecordFormat> TfRecordFormat(const TfRecordSource& spec) {
  return std::make_unique<TfRecordFormatImpl>(spec);
}

}  // namespace pstrain
