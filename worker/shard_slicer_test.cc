#include "worker/shard_slicer.h"

#include "common/placement/row_placement.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace worker {
namespace {

VariableDef Variable(const std::string& name, VariableKind kind, std::vector<int64_t> shape) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(kind);
  def.spec.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t d : shape) def.spec.mutable_shape()->add_dims(d);
  return def;
}

google::protobuf::RepeatedPtrField<VariablePlacement> Placements(
    std::vector<std::pair<std::string, int>> list) {
  google::protobuf::RepeatedPtrField<VariablePlacement> out;
  for (const auto& [name, shard] : list) {
    VariablePlacement* p = out.Add();
    p->set_name(name);
    p->set_shard_index(shard);
  }
  return out;
}

TEST(ShardSlicerTest, PlacesDenseVariablesAndSpreadsRowsByIdHash) {
  absl::StatusOr<ShardSlicer> slicer = ShardSlicer::Create(
      {Variable("w", VARIABLE_KIND_DENSE, {4, 2}), Variable("b", VARIABLE_KIND_DENSE, {2}),
       Variable("emb", VARIABLE_KIND_EMBEDDING, {0, 8})},
      Placements({{"w", 1}, {"b", 0}, {"emb", -1}}), 3);
  ASSERT_TRUE(slicer.ok()) << slicer.status();
  ASSERT_EQ(slicer->dense_on(1).size(), 1u);
  EXPECT_EQ(slicer->dense()[slicer->dense_on(1)[0]].name, "w");
  EXPECT_EQ(slicer->FindTable("emb")->dim, 8);
  EXPECT_TRUE(slicer->involves(2));  // rows of "emb" live everywhere
  const std::vector<int64_t> ids = {1, 2, 3, 4, 5, 6, -7, 1LL << 40};
  std::vector<std::vector<int32_t>> positions = slicer->SliceIds(ids);
  size_t total = 0;
  for (int s = 0; s < 3; ++s) {
    for (int32_t p : positions[s]) EXPECT_EQ(RowShard(ids[p], 3), s);
    total += positions[s].size();
  }
  EXPECT_EQ(total, ids.size());
}

TEST(ShardSlicerTest, ShardWithoutVariablesIsNotInvolved) {
  absl::StatusOr<ShardSlicer> slicer =
      ShardSlicer::Create({Variable("w", VARIABLE_KIND_DENSE, {4})}, Placements({{"w", 0}}), 2);
  ASSERT_TRUE(slicer.ok());
  EXPECT_TRUE(slicer->involves(0));
  EXPECT_FALSE(slicer->involves(1));
}

TEST(ShardSlicerTest, RefusesMissingOrImpossiblePlacements) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      ShardSlicer::Create({Variable("w", VARIABLE_KIND_DENSE, {4})}, Placements({}), 2).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      ShardSlicer::Create({Variable("w", VARIABLE_KIND_DENSE, {4})}, Placements({{"w", 2}}), 2)
          .status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(ShardSlicer::Create({Variable("e", VARIABLE_KIND_EMBEDDING, {10, 4})},
                                                  Placements({{"e", 0}}), 2)
                                  .status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ShardSlicer::Create({}, Placements({}), 0).status()));
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
