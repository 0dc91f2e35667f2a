#include "common/data/libsvm_writer.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <utility>
#include <vector>

#include "common/data/output_file.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr int64_t kExamplesPerFill = 1024;

// Appends `value` in the shortest decimal form that parses back to it.
void AppendNumber(float value, std::string* line) {
  char digits[32];
  const std::to_chars_result end = std::to_chars(digits, digits + sizeof(digits), value);
  line->append(digits, end.ptr);
}

void AppendFeature(int64_t index, float value, std::string* line) {
  char digits[24];
  line->push_back(' ');
  const std::to_chars_result end = std::to_chars(digits, digits + sizeof(digits), index);
  line->append(digits, end.ptr);
  line->push_back(':');
  AppendNumber(value, line);
}

// Appends example `i` of `batch` as one line. `features` is scratch space.
void AppendLine(const ExampleBatch& batch, int64_t i,
                std::vector<std::pair<int64_t, float>>* features, std::string* line) {
  AppendNumber(batch.labels[i], line);
  const int64_t dense_dim = batch.dense_dim();
  const float* dense = dense_dim > 0 ? batch.dense.data<float>() + i * dense_dim : nullptr;
  for (int64_t d = 0; d < dense_dim; ++d) {
    if (dense[d] != 0) AppendFeature(d + 1, dense[d], line);
  }
  if (batch.has_sparse()) {
    features->clear();
    for (int64_t k = batch.row_splits[i]; k < batch.row_splits[i + 1]; ++k) {
      const float value = batch.sparse_values.empty() ? 1.0f : batch.sparse_values[k];
      features->emplace_back(batch.sparse_ids[k], value);
    }
    // The reader wants strictly ascending indices: sort, and merge repeats.
    std::sort(features->begin(), features->end());
    for (size_t k = 0; k < features->size();) {
      const int64_t id = (*features)[k].first;
      float sum = 0;
      for (; k < features->size() && (*features)[k].first == id; ++k) sum += (*features)[k].second;
      AppendFeature(dense_dim + id + 1, sum, line);
    }
  }
  line->push_back('\n');
}

}  // namespace

absl::Status WriteLibsvmFile(Env& env, const std::string& path, const ExampleSource& source,
                             const LibsvmWriteOptions& options) {
  ASSIGN_OR_RETURN(OutputFile sink, OutputFile::Open(env, path, options.gzip));
  const int64_t n = source.num_examples();
  std::vector<int64_t> indices;
  std::vector<std::pair<int64_t, float>> features;
  ExampleBatch batch;
  std::string lines;
  for (int64_t begin = 0; begin < n; begin += kExamplesPerFill) {
    indices.resize(std::min(kExamplesPerFill, n - begin));
    std::iota(indices.begin(), indices.end(), begin);
    RETURN_IF_ERROR(source.Fill(indices, &batch));
    lines.clear();
    for (int64_t i = 0; i < batch.size; ++i) AppendLine(batch, i, &features, &lines);
    RETURN_IF_ERROR(sink.Write(lines));
  }
  return sink.Close();
}

int64_t LibsvmFeatureCount(const DatasetInfo& info) { return info.dense_dim + info.sparse_dim; }

}  // namespace pstrain
