#include "common/training/variable_store.h"

#include <vector>

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
  EXPECT_NEAR(VariableStore::GlobalNorm(g), std::sqrt(1 + 4 + 9 + 16 + 2 + 200.0), 1e-9);
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

}  // namespace
}  // namespace pstrain
