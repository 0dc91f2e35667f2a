#include "server/coordinator/variable_placement.h"

#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace coordinator {
namespace {

VariableSpec Dense(const std::string& name, std::vector<int64_t> dims) {
  VariableSpec v;
  v.set_name(name);
  v.set_kind(VARIABLE_KIND_DENSE);
  for (int64_t d : dims) v.mutable_shape()->add_dims(d);
  return v;
}

VariableSpec Table(const std::string& name) {
  VariableSpec v = Dense(name, {0, 8});
  v.set_kind(VARIABLE_KIND_EMBEDDING);
  return v;
}

TEST(PlaceVariablesTest, DenseVariablesBalanceBytesAndTablesGoEverywhere) {
  // 400, 300, 200, 100 floats: largest first onto the emptiest shard gives
  // {400, 100} and {300, 200}.
  std::vector<VariableSpec> variables = {Dense("b", {300}), Table("emb"), Dense("a", {400}),
                                         Dense("d", {100}), Dense("c", {20, 10})};
  absl::StatusOr<VariableLayout> layout = PlaceVariables(variables, 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->placements.size(), 5u);
  EXPECT_EQ(layout->placements[0].name(), "b");
  EXPECT_EQ(layout->placements[0].shard_index(), 1);
  EXPECT_EQ(layout->placements[1].shard_index(), -1);
  EXPECT_EQ(layout->placements[2].shard_index(), 0);
  EXPECT_EQ(layout->placements[3].shard_index(), 0);
  EXPECT_EQ(layout->placements[4].shard_index(), 1);
  EXPECT_EQ(layout->shard_dense_bytes, (std::vector<int64_t>{2000, 2000}));
  ASSERT_EQ(layout->shard_variables[0].size(), 3u);  // emb, a, d in the given order
  EXPECT_EQ(layout->shard_variables[0][0].name(), "emb");
  EXPECT_EQ(layout->shard_variables[1][1].name(), "emb");
}

TEST(PlaceVariablesTest, TheOrderGivenDoesNotChangeWhereVariablesGo) {
  std::vector<VariableSpec> forward = {Dense("x", {10}), Dense("y", {10}), Dense("z", {10})};
  std::vector<VariableSpec> backward = {forward[2], forward[1], forward[0]};
  absl::StatusOr<VariableLayout> a = PlaceVariables(forward, 2);
  absl::StatusOr<VariableLayout> b = PlaceVariables(backward, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a->placements[i].shard_index(), b->placements[2 - i].shard_index());
  }
}

TEST(PlaceVariablesTest, RefusesWhatCannotBePlaced) {
  EXPECT_EQ(PlaceVariables({Dense("a", {1})}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlaceVariables({Dense("a", {1}), Dense("a", {2})}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlaceVariables({Dense("", {1})}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PlaceVariables({Dense("n", {-1})}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
