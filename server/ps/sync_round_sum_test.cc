#include "server/ps/sync_round_sum.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;

// The bits of a dense sum, so that the comparison is exact (no float ==
// leniency, -0 differs from +0).
std::vector<uint32_t> Bits(const GradientRef& g) {
  std::vector<uint32_t> bits(g.values.size());
  std::memcpy(bits.data(), g.values.data(), g.values.size() * sizeof(float));
  return bits;
}

// Values whose sum depends on the order: (1e8 + -1e8) + 1 = 1, but
// (1e8 + 1) + -1e8 = 0 in float.
const std::vector<std::vector<float>> kOrderSensitive = {{1e8f}, {-1e8f}, {1.0f}};

TEST(SyncRoundSumTest, SumsInSlotOrderWhateverTheArrivalOrder) {
  std::vector<int> order = {0, 1, 2};
  std::vector<std::vector<uint32_t>> results;
  do {
    SyncRoundSum sum({{1, 1}});
    for (int slot : order) {
      const GradientRef g{0, false, {}, kOrderSensitive[slot], {}};
      sum.Add(slot, {g});
    }
    EXPECT_EQ(sum.summed_slots(), 3);
    const std::vector<GradientRef> sums = sum.Sums();
    ASSERT_EQ(sums.size(), 1u);
    EXPECT_THAT(sums[0].values, ElementsAre(1.0f)) << "arrival " << order[0] << order[1] << order[2];
    results.push_back(Bits(sums[0]));
  } while (std::next_permutation(order.begin(), order.end()));
  for (const auto& r : results) EXPECT_EQ(r, results[0]);
}

TEST(SyncRoundSumTest, AnEarlyContributionWaitsForTheLowerSlots) {
  SyncRoundSum sum({{2, 1}});
  const std::vector<float> a = {1, 2}, b = {10, 20};
  sum.Add(1, {GradientRef{0, false, {}, b, {}}});
  EXPECT_EQ(sum.summed_slots(), 0);
  EXPECT_TRUE(sum.Sums().empty());
  sum.Add(0, {GradientRef{0, false, {}, a, {}}});
  EXPECT_EQ(sum.summed_slots(), 2);
  EXPECT_THAT(sum.Sums()[0].values, ElementsAre(11.0f, 22.0f));
}

TEST(SyncRoundSumTest, CopiesEarlySegmentsAndRows) {
  // Variable 0 dense of 4 elements, variable 1 rows of width 2.
  SyncRoundSum sum({{4, 1}, {0, 2}});
  const std::vector<float> low = {1, 2}, high = {3, 4};
  const std::vector<DenseSegment> segments = {{2, high}, {0, low}};
  const std::vector<int64_t> ids = {7, 5, 7};
  const std::vector<float> rows = {1, 1, 2, 2, 3, 3};
  {
    // Slot 1 arrives first; its buffers go away before slot 0 arrives.
    std::vector<float> dense_early = {1, 2};
    std::vector<DenseSegment> seg = segments;
    const std::vector<GradientRef> early = {GradientRef{0, false, {}, {}, seg},
                                            GradientRef{1, true, ids, rows, {}}};
    sum.Add(1, early);
  }
  const std::vector<float> zeros = {0, 0, 0, 0};
  const std::vector<int64_t> id9 = {9};
  const std::vector<float> row9 = {5, 6};
  sum.Add(0, {GradientRef{0, false, {}, zeros, {}}, GradientRef{1, true, id9, row9, {}}});
  const std::vector<GradientRef> sums = sum.Sums();
  ASSERT_EQ(sums.size(), 2u);
  EXPECT_THAT(sums[0].values, ElementsAre(1, 2, 3, 4));
  // Rows in the order slot 0 then slot 1 first named them; repeated ids summed.
  EXPECT_THAT(sums[1].ids, ElementsAre(9, 7, 5));
  EXPECT_THAT(sums[1].values, ElementsAre(5, 6, 4, 4, 2, 2));
}

TEST(SyncRoundSumTest, ClearStartsANewRound) {
  SyncRoundSum sum({{1, 1}});
  const std::vector<float> one = {1};
  sum.Add(1, {GradientRef{0, false, {}, one, {}}});
  sum.Clear();
  EXPECT_EQ(sum.summed_slots(), 0);
  const std::vector<float> three = {3};
  sum.Add(0, {GradientRef{0, false, {}, three, {}}});
  EXPECT_THAT(sum.Sums()[0].values, ElementsAre(3.0f));
}

}  // namespace
}  // namespace pstrain
