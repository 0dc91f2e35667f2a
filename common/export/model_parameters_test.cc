#include "common/export/model_parameters.h"

#include <vector>

#include "common/optimizer/initializer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

VariableDef Dense(const std::string& name, std::vector<int64_t> dims) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(VARIABLE_KIND_DENSE);
  for (int64_t d : dims) def.spec.mutable_shape()->add_dims(d);
  return def;
}

VariableDef Table(const std::string& name, int64_t rows, int64_t dim) {
  VariableDef def = Dense(name, {rows, dim});
  def.spec.set_kind(VARIABLE_KIND_EMBEDDING);
  def.spec.mutable_initializer()->set_kind(INITIALIZER_KIND_UNIFORM);
  def.spec.mutable_initializer()->set_min(-1);
  def.spec.mutable_initializer()->set_max(1);
  return def;
}

TEST(ModelParametersTest, ViewsDenseVariablesAndStoredOrInitialRows) {
  auto parameters =
      ModelParameters::Create({Dense("w", {2, 3}), Table("emb", 10, 2)}, /*job_seed=*/9);
  ASSERT_TRUE(parameters.ok()) << parameters.status();
  Tensor* w = (*parameters)->mutable_dense("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->num_elements(), 6);
  w->data<float>()[4] = 2.5f;
  EmbeddingTableValues* table = (*parameters)->mutable_table("emb");
  ASSERT_NE(table, nullptr);
  ASSERT_TRUE(table->Set(7, std::vector<float>{1, 2}).ok());
  ASSERT_TRUE(table->Set(3, std::vector<float>{3, 4}).ok());
  ASSERT_TRUE(table->Set(7, std::vector<float>{5, 6}).ok());  // replaces
  EXPECT_EQ(table->num_rows(), 2);
  EXPECT_EQ(table->SortedIds(), (std::vector<int64_t>{3, 7}));

  ParameterView view;
  RowIds ids;
  ids["emb"] = {7, 1};
  ASSERT_TRUE((*parameters)->PrepareView(ids, &view).ok());
  auto dense = view.Dense("w", Shape({2, 3}));
  ASSERT_TRUE(dense.ok());
  EXPECT_EQ((*dense)[4], 2.5f);
  auto rows = view.Rows("emb", 2);
  ASSERT_TRUE(rows.ok()) << rows.status();
  const float* values = (*rows)->values.data<float>();
  EXPECT_EQ(values[0], 5);
  EXPECT_EQ(values[1], 6);
  // Row 1 was never stored: it reads as its initial value, as on a
  // parameter server of a job with the same seed.
  std::vector<float> initial(2);
  auto init = Initializer::ForVariable(table->spec(), 9);
  ASSERT_TRUE(init.ok());
  init->FillRow(1, absl::MakeSpan(initial));
  EXPECT_NE(initial[0], 0);
  EXPECT_EQ(values[2], initial[0]);
  EXPECT_EQ(values[3], initial[1]);
  EXPECT_EQ(table->num_rows(), 2);  // reading does not store
}

TEST(ModelParametersTest, RefusesBadIdsWidthsAndNames) {
  auto parameters = ModelParameters::Create({Table("emb", 4, 2)}, 0);
  ASSERT_TRUE(parameters.ok());
  EmbeddingTableValues* table = (*parameters)->mutable_table("emb");
  EXPECT_EQ(table->Set(4, std::vector<float>{1, 2}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(table->Set(0, std::vector<float>{1}).code(), absl::StatusCode::kInvalidArgument);
  ParameterView view;
  RowIds ids;
  ids["emb"] = {9};
  EXPECT_EQ((*parameters)->PrepareView(ids, &view).code(), absl::StatusCode::kInvalidArgument);
  RowIds unknown;
  unknown["other"] = {0};
  EXPECT_EQ((*parameters)->PrepareView(unknown, &view).code(), absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(ModelParameters::Create({Dense("w", {2}), Dense("w", {3})}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ModelParameters::Create({Table("t", 4, 0)}, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ModelParametersTest, UnstoredRowsOfDynamicTablesCanReadZero) {
  const std::vector<VariableDef> defs = {Table("dynamic", 0, 3), Table("fixed", 10, 3)};
  auto initial = ModelParameters::Create(defs, 0);
  auto zero = ModelParameters::Create(defs, 0, UnstoredRows::kZeroInDynamicTables);
  ASSERT_TRUE(initial.ok() && zero.ok());
  RowIds ids;
  ids["dynamic"] = {-5, 1LL << 40};  // a dynamic table takes any id
  ids["fixed"] = {7};
  ParameterView initial_view, zero_view;
  ASSERT_TRUE((*initial)->PrepareView(ids, &initial_view).ok());
  ASSERT_TRUE((*zero)->PrepareView(ids, &zero_view).ok());
  auto values = [](const ParameterView& view, const std::string& table) {
    const Tensor& rows = view.rows.at(table)->values;
    return std::vector<float>(rows.data<float>(), rows.data<float>() + rows.num_elements());
  };
  EXPECT_THAT(values(zero_view, "dynamic"), ::testing::Each(0.0f));
  EXPECT_THAT(values(initial_view, "dynamic"), ::testing::Contains(::testing::Ne(0.0f)));
  EXPECT_EQ(values(zero_view, "fixed"), values(initial_view, "fixed"));
  EXPECT_THAT(values(zero_view, "fixed"), ::testing::Contains(::testing::Ne(0.0f)));
}

}  // namespace
}  // namespace pstrain
