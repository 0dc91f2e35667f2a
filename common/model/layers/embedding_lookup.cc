#include "common/model/layers/embedding_lookup.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace pstrain {

EmbeddingLookup::EmbeddingLookup(int64_t dim, EmbeddingCombiner combiner)
    : dim_(dim), combiner_(combiner) {}

std::vector<int64_t> EmbeddingLookup::UniqueIds(absl::Span<const int64_t> ids) {
  std::vector<int64_t> unique(ids.begin(), ids.end());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  return unique;
}

absl::Status EmbeddingLookup::Forward(absl::Span<const int64_t> splits,
                                      absl::Span<const int64_t> ids,
                                      absl::Span<const float> weights, const EmbeddingRows& rows,
                                      float* out) {
  if (splits.empty() || splits.front() != 0 || splits.back() != static_cast<int64_t>(ids.size())) {
    return absl::InvalidArgumentError("bag splits must start at 0 and end at the number of ids");
  }
  if (!weights.empty() && weights.size() != ids.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(weights.size(), " weights for ", ids.size(), " ids"));
  }
  const int64_t num_rows = static_cast<int64_t>(rows.ids.size());
  if (rows.values.dtype() != DATA_TYPE_FLOAT32 || rows.values.shape() != Shape({num_rows, dim_})) {
    return absl::InvalidArgumentError(absl::StrCat("embedding rows are ", rows.values.DebugString(),
                                                   ", expected [", num_rows, ", ", dim_, "]"));
  }
  absl::flat_hash_map<int64_t, int32_t> row_of;
  row_of.reserve(rows.ids.size());
  for (int64_t r = 0; r < num_rows; ++r) row_of[rows.ids[r]] = static_cast<int32_t>(r);

  num_bags_ = static_cast<int64_t>(splits.size()) - 1;
  num_rows_ = num_rows;
  entry_row_.resize(ids.size());
  entry_bag_.resize(ids.size());
  entry_scale_.resize(ids.size());
  const float* table = rows.values.data<float>();
  std::fill_n(out, num_bags_ * dim_, 0.0f);
  for (int64_t b = 0; b < num_bags_; ++b) {
    if (splits[b + 1] < splits[b]) {
      return absl::InvalidArgumentError(absl::StrCat("bag splits decrease at bag ", b));
    }
    float total_weight = 0;
    for (int64_t e = splits[b]; e < splits[b + 1]; ++e) {
      total_weight += weights.empty() ? 1.0f : weights[e];
    }
    const float divisor =
        combiner_ == EmbeddingCombiner::kMean && total_weight != 0 ? total_weight : 1.0f;
    float* bag_out = out + b * dim_;
    for (int64_t e = splits[b]; e < splits[b + 1]; ++e) {
      auto it = row_of.find(ids[e]);
      if (it == row_of.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("id ", ids[e], " of bag ", b, " is not among the rows read"));
      }
      const float scale = (weights.empty() ? 1.0f : weights[e]) / divisor;
      entry_row_[e] = it->second;
      entry_bag_[e] = static_cast<int32_t>(b);
      entry_scale_[e] = scale;
      const float* row = table + it->second * dim_;
      for (int64_t d = 0; d < dim_; ++d) bag_out[d] += scale * row[d];
    }
  }
  return absl::OkStatus();
}

absl::Status EmbeddingLookup::Backward(const float* d_out, float* d_rows) const {
  std::fill_n(d_rows, num_rows_ * dim_, 0.0f);
  for (size_t e = 0; e < entry_row_.size(); ++e) {
    const float* g = d_out + entry_bag_[e] * dim_;
    float* d = d_rows + entry_row_[e] * dim_;
    const float scale = entry_scale_[e];
    for (int64_t k = 0; k < dim_; ++k) d[k] += scale * g[k];
  }
  return absl::OkStatus();
}

}  // namespace pstrain
