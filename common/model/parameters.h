#ifndef PSTRAIN_COMMON_MODEL_PARAMETERS_H_
#define PSTRAIN_COMMON_MODEL_PARAMETERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/tensor/tensor.h"

namespace pstrain {

// Some rows of an embedding table: the values an embedding lookup reads, or
// its sparse gradient. Row r of `values` belongs to ids[r]; ids are unique.
struct EmbeddingRows {
  std::vector<int64_t> ids;
  Tensor values;  // float32 [ids.size(), dim]
};

// For each embedding table, the unique ids a batch reads.
using RowIds = absl::flat_hash_map<std::string, std::vector<int64_t>>;

// The parameter values one step reads, borrowed from whoever holds them (the
// single-process trainer's variables, or what a worker pulled): dense
// variables whole, embedding tables as the rows the batch needs. The pointers
// must stay valid for the call that uses the view.
struct ParameterView {
  absl::flat_hash_map<std::string, const Tensor*> dense;
  absl::flat_hash_map<std::string, const EmbeddingRows*> rows;

  // The float32 data of dense variable `name`.
  // InvalidArgument: missing, or not float32 of `shape` (naming both shapes).
  absl::StatusOr<const float*> Dense(absl::string_view name, const Shape& shape) const;

  // The rows of table `name`. InvalidArgument: missing, or not float32
  // [ids.size(), dim].
  absl::StatusOr<const EmbeddingRows*> Rows(absl::string_view name, int64_t dim) const;
};

// Gradients of the mean batch loss: dense variables whole, embedding tables
// as rows (only those the batch touched). Reusing one Gradients across steps
// keeps its buffers.
struct Gradients {
  absl::flat_hash_map<std::string, Tensor> dense;
  absl::flat_hash_map<std::string, EmbeddingRows> rows;

  // A float32 buffer of `shape` for the gradient of `name`, reused when the
  // shape matches; contents undefined (the caller overwrites all of it).
  absl::StatusOr<float*> DenseBuffer(absl::string_view name, const Shape& shape);

  // The rows gradient of table `name` with `ids` and an undefined
  // [ids.size(), dim] value buffer.
  absl::StatusOr<float*> RowsBuffer(absl::string_view name, const std::vector<int64_t>& ids,
                                    int64_t dim);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_PARAMETERS_H_
