#include "common/data/tfrecord_writer.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/data/output_file.h"
#include "common/status/status_macros.h"
#include "common/summary/record_writer.h"
#include "protos/tf_example.pb.h"

namespace pstrain {
namespace {

constexpr int64_t kExamplesPerFill = 1024;

// The record of example `i` of `batch`.
tensorflow::Example ToExample(const ExampleBatch& batch, int64_t i, int32_t num_fields,
                              const TfRecordWriteOptions& options) {
  tensorflow::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  if (const int64_t dim = batch.dense_dim(); dim > 0) {
    const float* row = batch.dense.data<float>() + i * dim;
    features[options.dense_feature].mutable_float_list()->mutable_value()->Add(row, row + dim);
  }
  if (batch.has_sparse()) {
    const int64_t begin = batch.row_splits[i];
    const int64_t end = batch.row_splits[i + 1];
    for (int64_t k = begin; k < end; ++k) {
      const std::string name =
          num_fields > 0 ? absl::StrCat(options.field_prefix, k - begin) : options.ids_feature;
      features[name].mutable_int64_list()->add_value(batch.sparse_ids[k]);
    }
  }
  features[options.label_feature].mutable_float_list()->add_value(batch.labels[i]);
  return example;
}

}  // namespace

absl::Status WriteTfRecordFile(Env& env, const std::string& path, const ExampleSource& source,
                               const TfRecordWriteOptions& options) {
  ASSIGN_OR_RETURN(OutputFile sink, OutputFile::Open(env, path, options.gzip));
  const int64_t n = source.num_examples();
  std::vector<int64_t> indices;
  ExampleBatch batch;
  std::string bytes;
  for (int64_t begin = 0; begin < n; begin += kExamplesPerFill) {
    indices.resize(std::min(kExamplesPerFill, n - begin));
    std::iota(indices.begin(), indices.end(), begin);
    RETURN_IF_ERROR(source.Fill(indices, &batch));
    for (float value : batch.sparse_values) {
      if (value != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": the data's sparse ids carry values (", value,
                         "), which a tfrecord source does not read: writing it would lose them"));
      }
    }
    for (int64_t i = 0; i < batch.size; ++i) {
      ToExample(batch, i, source.info().num_fields, options).SerializeToString(&bytes);
      RETURN_IF_ERROR(sink.Write(FrameRecord(bytes)));
    }
  }
  return sink.Close();
}

}  // namespace pstrain
