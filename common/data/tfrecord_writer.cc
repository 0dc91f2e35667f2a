#include "common/data/tfrecord_writer.h"

#include <zlib.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
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

// Ends a gzip stream's zlib state, also when writing stopped on an error.
struct DeflateEnd {
  void operator()(z_stream* z) const {
    deflateEnd(z);
    delete z;
  }
};

// Where the framed records go: the file, or a gzip stream into it.
class RecordSink {
 public:
  static absl::StatusOr<RecordSink> Open(Env& env, const std::string& path, bool gzip) {
    RecordSink sink;
    sink.path_ = path;
    ASSIGN_OR_RETURN(sink.file_, env.NewWritableFile(path));
    if (gzip) {
      sink.deflate_.reset(new z_stream());
      // windowBits 16 + 15: a gzip wrapper; level 6, zlib's default.
      if (deflateInit2(sink.deflate_.get(), 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
          Z_OK) {
        return absl::InternalError(absl::StrCat(path, ": zlib cannot start a gzip stream"));
      }
    }
    return sink;
  }

  absl::Status Write(absl::string_view bytes) { return Feed(bytes, Z_NO_FLUSH); }

  absl::Status Close() {
    if (deflate_ != nullptr) {
      RETURN_IF_ERROR(Feed("", Z_FINISH));
      deflate_.reset();
    }
    return file_->Close();
  }

 private:
  absl::Status Feed(absl::string_view bytes, int flush) {
    if (deflate_ == nullptr) return file_->Append(bytes);
    z_stream& z = *deflate_;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(bytes.size());
    char out[1 << 16];
    int result = Z_OK;
    do {
      z.next_out = reinterpret_cast<Bytef*>(out);
      z.avail_out = sizeof(out);
      result = deflate(&z, flush);
      if (result == Z_STREAM_ERROR) {
        return absl::InternalError(absl::StrCat(path_, ": zlib refused the data"));
      }
      RETURN_IF_ERROR(file_->Append(absl::string_view(out, sizeof(out) - z.avail_out)));
    } while (z.avail_out == 0 || (flush == Z_FINISH && result != Z_STREAM_END));
    return absl::OkStatus();
  }

  std::string path_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<z_stream, DeflateEnd> deflate_;
};

}  // namespace

absl::Status WriteTfRecordFile(Env& env, const std::string& path, const ExampleSource& source,
                               const TfRecordWriteOptions& options) {
  ASSIGN_OR_RETURN(RecordSink sink, RecordSink::Open(env, path, options.gzip));
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
