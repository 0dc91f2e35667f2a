#include "common/model/layers/embedding_lookup.h"

#include <vector>

#include "common/model/layers/gradient_check.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using testing_util::Dot;
using testing_util::GradientsNear;
using testing_util::NumericalGradient;
using testing_util::RandomValues;

EmbeddingRows Rows(std::vector<int64_t> ids, int64_t dim, uint64_t seed) {
  EmbeddingRows rows;
  const int64_t n = static_cast<int64_t>(ids.size());
  rows.ids = std::move(ids);
  rows.values =
      std::move(Tensor::FromValues<float>(Shape({n, dim}), RandomValues(n * dim, -1, 1, seed)))
          .value();
  return rows;
}

TEST(EmbeddingLookupTest, SumAndMeanPooling) {
  EmbeddingRows rows;
  rows.ids = {10, 20, 30};
  rows.values =
      std::move(Tensor::FromValues<float>(Shape({3, 2}), {1, 2, 10, 20, 100, 200})).value();
  const std::vector<int64_t> splits = {0, 2, 2, 5};  // the middle bag is empty
  const std::vector<int64_t> ids = {10, 30, 20, 20, 10};
  const std::vector<float> weights = {1, 2, 1, 1, 2};
  std::vector<float> out(6);
  EmbeddingLookup sum(2, EmbeddingCombiner::kSum);
  ASSERT_TRUE(sum.Forward(splits, ids, weights, rows, out.data()).ok());
  EXPECT_EQ(out, (std::vector<float>{201, 402, 0, 0, 22, 44}));
  EmbeddingLookup mean(2, EmbeddingCombiner::kMean);
  ASSERT_TRUE(mean.Forward(splits, ids, weights, rows, out.data()).ok());
  EXPECT_FLOAT_EQ(out[0], 201.0f / 3);
  EXPECT_EQ(out[2], 0);
  EXPECT_FLOAT_EQ(out[5], 44.0f / 4);
  ASSERT_TRUE(mean.Forward(splits, ids, {}, rows, out.data()).ok());
  EXPECT_FLOAT_EQ(out[0], 101.0f / 2);
}

TEST(EmbeddingLookupTest, SparseGradientMatchesNumerical) {
  for (EmbeddingCombiner combiner : {EmbeddingCombiner::kSum, EmbeddingCombiner::kMean}) {
    const int64_t dim = 3;
    const std::vector<int64_t> splits = {0, 3, 4, 7};
    const std::vector<int64_t> ids = {5, 9, 5, 2, 9, 2, 7};
    const std::vector<float> weights = {0.5f, 1, 2, 1, 1.5f, 1, 0.25f};
    EmbeddingRows rows = Rows(EmbeddingLookup::UniqueIds(ids), dim, 3);
    ASSERT_EQ(rows.ids, (std::vector<int64_t>{2, 5, 7, 9}));
    EmbeddingLookup layer(dim, combiner);
    const std::vector<float> r = RandomValues(3 * dim, -1, 1, 4);
    std::vector<float> out(3 * dim);
    auto loss = [&] {
      EXPECT_TRUE(layer.Forward(splits, ids, weights, rows, out.data()).ok());
      return Dot(out.data(), r.data(), out.size());
    };
    loss();
    std::vector<float> d_rows(rows.values.num_elements());
    ASSERT_TRUE(layer.Backward(r.data(), d_rows.data()).ok());
    EXPECT_TRUE(GradientsNear(d_rows.data(), NumericalGradient(loss, rows.values.data<float>(),
                                                               rows.values.num_elements())));
  }
}

TEST(EmbeddingLookupTest, RefusesUnknownIdsAndBadSplits) {
  EmbeddingRows rows = Rows({1, 2}, 2, 1);
  EmbeddingLookup layer(2, EmbeddingCombiner::kSum);
  std::vector<float> out(4);
  const std::vector<int64_t> ids = {1, 3};
  auto status = layer.Forward({0, 1, 2}, ids, {}, rows, out.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("id 3"), std::string::npos);
  EXPECT_FALSE(layer.Forward({0, 1}, ids, {}, rows, out.data()).ok());
  EXPECT_FALSE(layer.Forward({0, 2, 1, 2}, {1, 2}, {}, rows, out.data()).ok());
}

}  // namespace
}  // namespace pstrain
