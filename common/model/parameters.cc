#include "common/model/parameters.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::StatusOr<const float*> ParameterView::Dense(absl::string_view name,
                                                  const Shape& shape) const {
  auto it = dense.find(name);
  if (it == dense.end() || it->second == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no value for variable ", name));
  }
  const Tensor& tensor = *it->second;
  if (tensor.dtype() != DATA_TYPE_FLOAT32 || tensor.shape() != shape) {
    return absl::InvalidArgumentError(absl::StrCat("variable ", name, " is ", tensor.DebugString(),
                                                   ", expected float32 ", shape.DebugString()));
  }
  return tensor.data<float>();
}

absl::StatusOr<const EmbeddingRows*> ParameterView::Rows(absl::string_view name,
                                                         int64_t dim) const {
  auto it = rows.find(name);
  if (it == rows.end() || it->second == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no rows for embedding table ", name));
  }
  const EmbeddingRows& found = *it->second;
  const Shape expected({static_cast<int64_t>(found.ids.size()), dim});
  if (found.values.dtype() != DATA_TYPE_FLOAT32 || found.values.shape() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("rows of ", name, " are ",
                                                   found.values.DebugString(),
                                                   ", expected float32 ", expected.DebugString()));
  }
  return &found;
}

absl::StatusOr<float*> Gradients::DenseBuffer(absl::string_view name, const Shape& shape) {
  Tensor& tensor = dense[name];
  if (tensor.dtype() != DATA_TYPE_FLOAT32 || tensor.shape() != shape) {
    absl::StatusOr<Tensor> created = Tensor::CreateUninitialized(DATA_TYPE_FLOAT32, shape);
    if (!created.ok()) return created.status();
    tensor = std::move(created).value();
  }
  return tensor.data<float>();
}

absl::StatusOr<float*> Gradients::RowsBuffer(absl::string_view name,
                                             const std::vector<int64_t>& ids, int64_t dim) {
  EmbeddingRows& entry = rows[name];
  entry.ids = ids;
  const Shape shape({static_cast<int64_t>(ids.size()), dim});
  if (entry.values.dtype() != DATA_TYPE_FLOAT32 || entry.values.shape() != shape) {
    absl::StatusOr<Tensor> created = Tensor::CreateUninitialized(DATA_TYPE_FLOAT32, shape);
    if (!created.ok()) return created.status();
    entry.values = std::move(created).value();
  }
  return entry.values.data<float>();
}

}  // namespace pstrain
