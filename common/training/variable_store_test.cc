#include "common/training/variable_store.h"

#include <vector>

#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/shard_file.h"
#include "common/checkpoint/test_checkpoints.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

VariableDef Dense(const std::string& name, std::vector<int64_t> dims, float value) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(VARIABLE_KIND_DENSE);
  for (int64_t d : dims) def.spec.mutable_shape()->add_dims(d);
  def.spec.mutable_initializer()->set_kind(INITIALIZER_KIND_CONSTANT);
  def.spec.mutable_initializer()->set_value(value);
  return def;
}

VariableDef Table(const std::string& name, int64_t rows, int64_t dim) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(VARIABLE_KIND_EMBEDDING);
  def.spec.mutable_shape()->add_dims(rows);
  def.spec.mutable_shape()->add_dims(dim);
  def.spec.mutable_initializer()->set_kind(INITIALIZER_KIND_CONSTANT);
  def.spec.mutable_initializer()->set_value(1);
  return def;
}

std::unique_ptr<Optimizer> Sgd() { return std::move(Optimizer::Create(OptimizerSpec())).value(); }

TEST(VariableStoreTest, DenseAndSparseUpdates) {
  auto rule = Sgd();
  VariableDef frozen = Dense("frozen", {2}, 5);
  frozen.trainable = false;
  auto store = VariableStore::Create({Dense("w", {2, 2}, 0.5f), Table("emb", 100, 2), frozen},
                                     /*job_seed=*/0, rule.get());
  ASSERT_TRUE(store.ok()) << store.status();
  ParameterView view;
  ASSERT_TRUE((*store)->PrepareView({{"emb", {3, 42}}}, &view).ok());
  EXPECT_EQ(view.dense.size(), 2u);
  EXPECT_EQ(view.rows.at("emb")->ids, (std::vector<int64_t>{3, 42}));
  EXPECT_EQ(view.rows.at("emb")->values.data<float>()[3], 1.0f);
  EXPECT_EQ((*store)->num_rows("emb"), 2);

  Gradients g;
  g.dense["w"] = std::move(Tensor::FromValues<float>(Shape({2, 2}), {1, 2, 3, 4})).value();
  g.dense["frozen"] = std::move(Tensor::FromValues<float>(Shape({2}), {1, 1})).value();
  g.rows["emb"].ids = {42};
  g.rows["emb"].values = std::move(Tensor::FromValues<float>(Shape({1, 2}), {10, -10})).value();
  UpdateStep c;
  c.learning_rate = 0.1f;
  ASSERT_TRUE((*store)->Apply(g, c).ok());
  EXPECT_FLOAT_EQ((*store)->dense("w")->data<float>()[3], 0.5f - 0.4f);
  EXPECT_FLOAT_EQ((*store)->dense("frozen")->data<float>()[0], 5);
  EXPECT_EQ(*(*store)->Row("emb", 42), (std::vector<float>{0, 2}));
  EXPECT_EQ(*(*store)->Row("emb", 3), (std::vector<float>{1, 1}));
}

TEST(VariableStoreTest, RefusesBadGradientsAndIds) {
  auto rule = Sgd();
  auto store = VariableStore::Create({Dense("w", {2}, 0), Table("emb", 10, 2)}, 0, rule.get());
  ASSERT_TRUE(store.ok());
  ParameterView view;
  EXPECT_EQ((*store)->PrepareView({{"emb", {10}}}, &view).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*store)->PrepareView({{"other", {1}}}, &view).code(),
            absl::StatusCode::kInvalidArgument);
  Gradients g;
  g.dense["w"] = std::move(Tensor::FromValues<float>(Shape({3}), {1, 2, 3})).value();
  EXPECT_EQ((*store)->Apply(g, UpdateStep()).code(), absl::StatusCode::kInvalidArgument);
  Gradients never_read;
  never_read.rows["emb"].ids = {7};
  never_read.rows["emb"].values =
      std::move(Tensor::FromValues<float>(Shape({1, 2}), {1, 1})).value();
  EXPECT_EQ((*store)->Apply(never_read, UpdateStep()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(VariableStore::Create({Dense("w", {2}, 0), Dense("w", {2}, 0)}, 0, rule.get()).ok());
}

TEST(VariableStoreTest, SlotsStartAtTheRuleInitialValue) {
  OptimizerSpec spec;
  spec.mutable_adagrad()->set_initial_accumulator(4);
  spec.set_learning_rate(1);
  auto rule = std::move(Optimizer::Create(spec)).value();
  auto store = VariableStore::Create({Dense("w", {1}, 0), Table("emb", 0, 1)}, 0, rule.get());
  ASSERT_TRUE(store.ok());
  ParameterView view;
  ASSERT_TRUE((*store)->PrepareView({{"emb", {-5}}}, &view).ok());  // dynamic: any id
  Gradients g;
  g.dense["w"] = std::move(Tensor::FromValues<float>(Shape({1}), {3})).value();
  g.rows["emb"].ids = {-5};
  g.rows["emb"].values = std::move(Tensor::FromValues<float>(Shape({1, 1}), {3})).value();
  UpdateStep c;
  c.learning_rate = 1;
  ASSERT_TRUE((*store)->Apply(g, c).ok());
  // acc = 4 + 9 = 13: w = -3 / sqrt(13).
  EXPECT_NEAR((*store)->dense("w")->data<float>()[0], -3 / std::sqrt(13.0), 1e-5);
  EXPECT_NEAR((*(*store)->Row("emb", -5))[0], 1 - 3 / std::sqrt(13.0), 1e-5);
}

TEST(VariableStoreTest, WritesEveryVariableAndSlotAsOneCheckpointShard) {
  OptimizerSpec adam_spec;
  adam_spec.mutable_adam();
  auto adam = std::move(Optimizer::Create(adam_spec)).value();
  ASSERT_EQ(adam->num_slots(), 2);
  VariableDef frozen = Dense("frozen", {2}, 5);
  frozen.trainable = false;
  auto store = VariableStore::Create({Dense("w", {3}, 0.5f), Table("emb", 0, 2), frozen},
                                     /*job_seed=*/0, adam.get());
  ASSERT_TRUE(store.ok()) << store.status();
  ParameterView view;
  ASSERT_TRUE((*store)->PrepareView({{"emb", {42, 7}}}, &view).ok());

  PosixEnv env;
  const std::string path = NewTestDir(env) + "/shard-0-of-1";
  auto writer = ShardFileWriter::Create(env, path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ShardFileHeader header;
  header.job_id = "local";
  header.global_step = 12;
  absl::StatusOr<ShardFileInfo> written = (*store)->WriteCheckpointShard(header, **writer);
  ASSERT_TRUE(written.ok()) << written.status();

  auto reader = ShardFileReader::Open(env, path, {written->bytes, written->crc32c, true});
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->header().job_id, "local");
  EXPECT_EQ((*reader)->header().global_step, 12);
  EXPECT_EQ((*reader)->header().num_shards, 1);
  EXPECT_EQ((*reader)->header().optimizer, adam->name());
  ASSERT_EQ((*reader)->num_variables(), 3);
  // Dense variables, then tables, each in name order.
  EXPECT_EQ((*reader)->variable(0).name, "frozen");
  EXPECT_EQ((*reader)->variable(1).name, "w");
  EXPECT_EQ((*reader)->variable(2).name, "emb");

  std::vector<float> values(3);
  (*reader)->CopyDense(1, 0, values.data());
  EXPECT_EQ(values, (std::vector<float>{0.5f, 0.5f, 0.5f}));
  // The variable that is not trained still has its slots, at their start.
  std::vector<float> slot(2);
  (*reader)->CopyDense(0, 2, slot.data());
  EXPECT_EQ(slot, (std::vector<float>(2, adam->slot_initial_value(1))));

  const ShardFileVariable& table = (*reader)->variable(2);
  ASSERT_EQ(table.num_rows, 2);
  EXPECT_EQ(table.row_floats, 2 * 3);
  std::vector<int64_t> ids(2);
  std::vector<float> rows(2 * 6);
  (*reader)->CopyRows(2, ids.data(), rows.data());
  EXPECT_EQ(ids, (std::vector<int64_t>{7, 42}));
  EXPECT_EQ(rows[0], 1.0f);  // the row's value, then its slots
}

}  // namespace
}  // namespace pstrain
