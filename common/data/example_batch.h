#ifndef PSTRAIN_COMMON_DATA_EXAMPLE_BATCH_H_
#define PSTRAIN_COMMON_DATA_EXAMPLE_BATCH_H_

#include <cstdint>
#include <vector>

#include "common/tensor/tensor.h"

namespace pstrain {

// A batch of training or evaluation examples: dense features, sparse
// features, or both, and one label per example. Move-only (it holds a
// Tensor). Thread-compatible.
struct ExampleBatch {
  // Examples in the batch.
  int64_t size = 0;

  // float32 [size, dense_dim], row-major; images are flattened in
  // height-width-channel order. Empty (no elements) when the data has no
  // dense features.
  Tensor dense;

  // Sparse features in compressed-row form: example i owns entries
  // [row_splits[i], row_splits[i + 1]) of sparse_ids and sparse_values.
  // row_splits has size + 1 entries when the data has sparse features and
  // is empty otherwise. sparse_values empty means every value is 1.
  std::vector<int64_t> sparse_ids;
  std::vector<float> sparse_values;
  std::vector<int64_t> row_splits;

  // [size]: a class id (0, 1, ...), a binary label (0 or 1) or a real
  // target, as the data provides.
  std::vector<float> labels;

  // Epoch (0-based) the examples were read in; 0 for data that is not read
  // in epochs.
  int64_t epoch = 0;

  int64_t dense_dim() const { return dense.shape().rank() == 2 ? dense.shape().dim(1) : 0; }
  bool has_sparse() const { return !row_splits.empty(); }
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_EXAMPLE_BATCH_H_
