#include "common/placement/variable_placement.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

VariableSpec Dense(const std::string& name, std::vector<int64_t> dims) {
  VariableSpec spec;
  spec.set_name(name);
  spec.set_kind(VARIABLE_KIND_DENSE);
  spec.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t d : dims) spec.mutable_shape()->add_dims(d);
  return spec;
}

VariableSpec Table(const std::string& name, int64_t rows, int64_t dim) {
  VariableSpec spec = Dense(name, {rows, dim});
  spec.set_kind(VARIABLE_KIND_EMBEDDING);
  return spec;
}

TEST(VariablePlacementTest, LargestFirstOnTheEmptiestShard) {
  // 400, 300, 200, 200 and 100 floats over two shards: 400 -> 0, 300 -> 1,
  // 200 "a" -> 1 (300 < 400), 200 "b" -> 0, 100 -> 1: 600 and 600 floats.
  const std::vector<VariableSpec> vars = {
      Dense("small", {100}), Dense("b", {10, 20}), Dense("big", {20, 20}),
      Table("emb", 0, 8),    Dense("a", {200}),    Dense("mid", {3, 10, 10}),
  };
  const absl::StatusOr<VariablePlacements> p = PlaceVariables(vars, 2);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->shard_index, ElementsAre(1, 0, 0, kEveryShard, 1, 1));
  EXPECT_THAT(p->dense_bytes, ElementsAre(2400, 2400));
  std::vector<std::string> names;
  for (const VariableSpec& v : VariablesOnShard(vars, *p, 0)) names.push_back(v.name());
  EXPECT_THAT(names, ElementsAre("b", "big", "emb"));
  names.clear();
  for (const VariableSpec& v : VariablesOnShard(vars, *p, 1)) names.push_back(v.name());
  EXPECT_THAT(names, ElementsAre("small", "emb", "a", "mid"));
}

TEST(VariablePlacementTest, MoreShardsThanVariablesAndOneShard) {
  const std::vector<VariableSpec> vars = {Dense("w", {4}), Dense("b", {1}), Dense("s", {})};
  const VariablePlacements many = PlaceVariables(vars, 5).value();
  EXPECT_THAT(many.shard_index, ElementsAre(0, 1, 2));  // equal sizes go by name: "b" before "s"
  EXPECT_THAT(many.dense_bytes, ElementsAre(16, 4, 4, 0, 0));
  const VariablePlacements one = PlaceVariables(vars, 1).value();
  EXPECT_THAT(one.shard_index, ElementsAre(0, 0, 0));
  EXPECT_THAT(one.dense_bytes, ElementsAre(24));
  EXPECT_TRUE(PlaceVariables({}, 3).value().shard_index.empty());
}

// Every process placing a job must agree, whatever order it lists the
// variables in; and greedy placement keeps the spread within the largest
// variable.
TEST(VariablePlacementTest, IndependentOfOrderAndBalanced) {
  std::mt19937 rng(7);
  std::vector<VariableSpec> vars;
  int64_t largest = 0;
  for (int i = 0; i < 60; ++i) {
    const int64_t rows = 1 + rng() % 300, cols = 1 + rng() % 50;
    vars.push_back(Dense("layer" + std::to_string(i) + "/kernel", {rows, cols}));
    largest = std::max(largest, rows * cols * 4);
  }
  vars.push_back(Table("emb", 1000, 16));
  const VariablePlacements p = PlaceVariables(vars, 4).value();
  const auto [lo, hi] = std::minmax_element(p.dense_bytes.begin(), p.dense_bytes.end());
  EXPECT_LE(*hi - *lo, largest);
  int64_t total = 0;
  for (const VariableSpec& v : vars) {
    if (v.kind() == VARIABLE_KIND_DENSE) total += v.shape().dims(0) * v.shape().dims(1) * 4;
  }
  EXPECT_EQ(std::accumulate(p.dense_bytes.begin(), p.dense_bytes.end(), int64_t{0}), total);

  std::vector<int> order(vars.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<VariableSpec> shuffled;
  for (int i : order) shuffled.push_back(vars[i]);
  const VariablePlacements q = PlaceVariables(shuffled, 4).value();
  for (size_t j = 0; j < order.size(); ++j) {
    EXPECT_EQ(q.shard_index[j], p.shard_index[order[j]]) << shuffled[j].name();
  }
  EXPECT_EQ(q.dense_bytes, p.dense_bytes);
}

TEST(VariablePlacementTest, RefusesWhatNoShardCouldHold) {
  EXPECT_EQ(PlaceVariables({Dense("w", {2})}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status twice = PlaceVariables({Dense("w", {2}), Table("w", 0, 2)}, 2).status();
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(twice.message(), HasSubstr("\"w\" appears twice"));
  EXPECT_THAT(PlaceVariables({Dense("z", {3, 0})}, 2).status().message(), HasSubstr("\"z\""));
  EXPECT_EQ(PlaceVariables({Dense("huge", {int64_t{1} << 30, 1 << 20})}, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(PlaceVariables({Table("t", 10, 0)}, 2).status().message(), HasSubstr("\"t\""));
  VariableSpec unknown = Dense("u", {1});
  unknown.set_kind(VARIABLE_KIND_UNSPECIFIED);
  EXPECT_EQ(PlaceVariables({unknown}, 2).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlaceVariables({Dense("", {1})}, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
