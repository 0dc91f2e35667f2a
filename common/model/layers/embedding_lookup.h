#ifndef PSTRAIN_COMMON_MODEL_LAYERS_EMBEDDING_LOOKUP_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_EMBEDDING_LOOKUP_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "common/model/parameters.h"

namespace pstrain {

enum class EmbeddingCombiner {
  kSum,   // sum_e w_e * row(id_e)
  kMean,  // sum_e w_e * row(id_e) / sum_e w_e; zero for an empty bag
};

// Embedding lookup with pooling over variable-length bags of ids: bag b
// holds entries [splits[b], splits[b + 1]) of (ids, weights), and its output
// row combines the table rows of those ids. The table is given as the rows
// the batch reads (EmbeddingRows), and the gradient comes back the same way:
// one row per id read, so it is sparse in the table. Thread-compatible.
class EmbeddingLookup {
 public:
  EmbeddingLookup(int64_t dim, EmbeddingCombiner combiner);

  // The sorted unique ids of `ids`: the rows a lookup of them reads.
  static std::vector<int64_t> UniqueIds(absl::Span<const int64_t> ids);

  // out [num_bags, dim] = the pooled rows of each bag. `weights` empty means
  // every weight is 1. InvalidArgument: splits that are not a non-decreasing
  // cover of the ids starting at 0, weights of another length, rows of
  // another width, or an id that is not among rows.ids (naming it).
  absl::Status Forward(absl::Span<const int64_t> splits, absl::Span<const int64_t> ids,
                       absl::Span<const float> weights, const EmbeddingRows& rows, float* out);

  // d_rows [rows.ids.size(), dim] = d(loss)/d(rows), from d_out [num_bags,
  // dim] and the bags of the last Forward. Rows no bag read get zeros.
  absl::Status Backward(const float* d_out, float* d_rows) const;

  int64_t dim() const { return dim_; }

 private:
  const int64_t dim_;
  const EmbeddingCombiner combiner_;
  // From the last Forward: per entry, its row among rows.ids, its bag and
  // its scale (weight, divided by the bag's weight sum for kMean).
  std::vector<int32_t> entry_row_;
  std::vector<int32_t> entry_bag_;
  std::vector<float> entry_scale_;
  int64_t num_rows_ = 0;
  int64_t num_bags_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_EMBEDDING_LOOKUP_H_
