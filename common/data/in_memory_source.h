#ifndef PSTRAIN_COMMON_DATA_IN_MEMORY_SOURCE_H_
#define PSTRAIN_COMMON_DATA_IN_MEMORY_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/data/byte_buffer.h"
#include "common/data/example_source.h"
#include "common/data/label_places.h"

namespace pstrain {

// The examples of a data set that fits in memory, as the file readers
// (Fashion-MNIST, CSV, libsvm) produce them. Immutable; thread-safe.
class InMemorySource : public ExampleSource {
 public:
  struct Examples {
    int64_t num_examples = 0;
    int64_t dense_dim = 0;
    // Dense features, [num_examples, dense_dim] row-major: either bytes
    // (images), each read as byte * byte_scale, or floats. At most one is set.
    ByteBuffer dense_bytes;
    float byte_scale = 1.0f;
    std::vector<float> dense_floats;
    // Optional image layout of the dense features.
    int64_t image_height = 0, image_width = 0, image_channels = 0;
    // Sparse features in compressed-row form (see ExampleBatch); row_splits
    // empty when there are none. sparse_values empty means all ones.
    std::vector<int64_t> sparse_ids;
    std::vector<float> sparse_values;
    std::vector<int64_t> row_splits;
    int64_t sparse_dim = 0;
    // Ids per example when each is one per categorical field (so every
    // example has this many); 0 otherwise.
    int32_t num_fields = 0;
    std::vector<float> labels;
    // As DatasetInfo's, which they are copied to.
    std::vector<std::string> dense_names;
    std::vector<float> dense_fill;
    std::vector<float> dense_mean;
    std::vector<float> dense_scale;
    LabelPlaces label_places;
  };

  // Validates that the parts agree and computes the class count.
  // InvalidArgument: sizes that do not match num_examples and dense_dim,
  // decreasing row_splits, a sparse id outside [0, sparse_dim), or an
  // example with another number of ids than num_fields (when set).
  static absl::StatusOr<std::unique_ptr<InMemorySource>> Create(Examples examples);

  const DatasetInfo& info() const override { return info_; }
  absl::Status Fill(absl::Span<const int64_t> indices, ExampleBatch* batch) const override;

 private:
  InMemorySource(Examples examples, DatasetInfo info);

  const Examples examples_;
  const DatasetInfo info_;
};

// Row `index` of `examples`.
struct ExampleRow {
  const InMemorySource::Examples* examples = nullptr;
  int64_t index = 0;
};

// Replaces *batch with `rows`, in that order, reusing its storage where the
// shapes allow: how InMemorySource::Fill and the streamed sources (whose
// batches gather rows of several decoded blocks) assemble a batch. Every
// row's examples have `dense_dim` dense features, and sparse ones when
// `sparse`; the indices are valid (not checked).
absl::Status GatherExamples(absl::Span<const ExampleRow> rows, int64_t dense_dim, bool sparse,
                            ExampleBatch* batch);

// The class count of `labels` for DatasetInfo::num_classes: the largest
// label + 1 (at least 2) if every label is a non-negative integer, else 0.
int32_t ClassCountOf(absl::Span<const float> labels);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_IN_MEMORY_SOURCE_H_
