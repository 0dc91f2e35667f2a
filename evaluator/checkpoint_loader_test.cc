#include "evaluator/checkpoint_loader.h"

#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace evaluator {
namespace {

using internal::ShardVariableValues;

VariableDef Def(const std::string& name, bool embedding, std::vector<int64_t> dims) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(embedding ? VARIABLE_KIND_EMBEDDING : VARIABLE_KIND_DENSE);
  for (int64_t d : dims) def.spec.mutable_shape()->add_dims(d);
  return def;
}

ShardVariableValues Dense(const std::string& name, std::vector<int64_t> dims,
                          std::vector<float> values) {
  ShardVariableValues v;
  v.name = name;
  v.dims = std::move(dims);
  v.values = std::move(values);
  return v;
}

ShardVariableValues Rows(const std::string& name, std::vector<int64_t> ids,
                         std::vector<float> values) {
  ShardVariableValues v;
  v.name = name;
  v.embedding = true;
  v.dims = {0, 2};
  v.ids = std::move(ids);
  v.values = std::move(values);
  return v;
}

std::unique_ptr<ModelParameters> Parameters() {
  auto parameters = ModelParameters::Create(
      {Def("w", false, {2, 2}), Def("b", false, {2}), Def("emb", true, {0, 2})}, 0);
  EXPECT_TRUE(parameters.ok());
  return std::move(parameters).value();
}

TEST(CheckpointAssemblerTest, GathersDenseVariablesAndRowsOfEveryShard) {
  auto parameters = Parameters();
  CheckpointAssembler assembler(parameters.get(), "/m/ckpt-5");
  auto w = Dense("w", {2, 2}, {1, 2, 3, 4});
  auto rows0 = Rows("emb", {4, 8}, {1, 1, 2, 2});
  auto b = Dense("b", {2}, {5, 6});
  auto rows1 = Rows("emb", {3}, {7, 7});
  ASSERT_TRUE(assembler.Add("shard-00000-of-00002", w).ok());
  ASSERT_TRUE(assembler.Add("shard-00000-of-00002", rows0).ok());
  EXPECT_EQ(assembler.Finish().code(), absl::StatusCode::kFailedPrecondition);  // b missing
  ASSERT_TRUE(assembler.Add("shard-00001-of-00002", b).ok());
  ASSERT_TRUE(assembler.Add("shard-00001-of-00002", rows1).ok());
  ASSERT_TRUE(assembler.Finish().ok());
  EXPECT_EQ(parameters->dense("w")->data<float>()[3], 4);
  EXPECT_EQ(parameters->dense("b")->data<float>()[0], 5);
  EXPECT_EQ(parameters->table("emb")->SortedIds(), (std::vector<int64_t>{3, 4, 8}));
  EXPECT_EQ(parameters->table("emb")->Find(8)[1], 2);
}

TEST(CheckpointAssemblerTest, RefusesWhatDoesNotFit) {
  auto parameters = Parameters();
  CheckpointAssembler assembler(parameters.get(), "/m/ckpt-5");
  auto unknown = Dense("v", {2}, {1, 2});
  EXPECT_EQ(assembler.Add("s0", unknown).code(), absl::StatusCode::kFailedPrecondition);
  auto reshaped = Dense("w", {4}, {1, 2, 3, 4});
  absl::Status status = assembler.Add("s0", reshaped);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("[4]"), absl::string_view::npos) << status;
  auto w = Dense("w", {2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(assembler.Add("s0", w).ok());
  EXPECT_EQ(assembler.Add("s1", w).code(), absl::StatusCode::kDataLoss);
  auto rows = Rows("emb", {1}, {1, 1});
  ASSERT_TRUE(assembler.Add("s0", rows).ok());
  EXPECT_EQ(assembler.Add("s1", rows).code(), absl::StatusCode::kDataLoss);
  auto short_rows = Rows("emb", {2, 3}, {1, 1});
  EXPECT_EQ(assembler.Add("s1", short_rows).code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace evaluator
}  // namespace pstrain
