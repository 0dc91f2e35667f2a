#include "common/model/model_kind.h"

#include "gtest/gtest.h"

namespace pstrain {
namespace {

// A kind added to the proto without its row would be refused by
// validation as unknown and missing from every list a user is shown.
TEST(ModelKindTest, EveryKindOfTheProtoHasOneRowUnderItsFieldName) {
  const google::protobuf::OneofDescriptor* oneof = ModelSpec::descriptor()->FindOneofByName("kind");
  ASSERT_NE(oneof, nullptr);
  ASSERT_EQ(ModelKinds().size(), static_cast<size_t>(oneof->field_count()));
  for (int i = 0; i < oneof->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = oneof->field(i);
    const ModelKind* kind = ModelKindOf(static_cast<ModelSpec::KindCase>(field->number()));
    ASSERT_NE(kind, nullptr) << field->name();
    EXPECT_EQ(kind->name, field->name());
    EXPECT_EQ(&ModelKinds()[i], kind) << "rows follow the proto's order";
  }
  EXPECT_EQ(ModelKindOf(ModelSpec::KIND_NOT_SET), nullptr);
}

TEST(ModelKindTest, FindsTheDynamicTablesWithoutABudgetAndSetsThem) {
  ModelSpec onnx;
  onnx.mutable_onnx()->add_dynamic_tables()->set_max_bytes_per_shard(100);
  onnx.mutable_onnx()->add_dynamic_tables();
  std::vector<UnbudgetedTable> tables = ModelKindOf(ModelSpec::kOnnx)->unbudgeted_tables(&onnx);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].path, "model.onnx.dynamic_tables[1]");
  tables[0].set_budget(7);
  EXPECT_EQ(onnx.onnx().dynamic_tables(1).max_bytes_per_shard(), 7);

  ModelSpec fixed;
  fixed.mutable_wide_and_deep()->mutable_embedding()->set_vocabulary_size(1000);
  EXPECT_TRUE(ModelKindOf(ModelSpec::kWideAndDeep)->unbudgeted_tables(&fixed).empty());
  EXPECT_EQ(ModelKindOf(ModelSpec::kMlp)->unbudgeted_tables, nullptr);

  // dlrm's one EmbeddingSpec stands for every field's table.
  ModelSpec dlrm;
  dlrm.mutable_dlrm();
  tables = ModelKindOf(ModelSpec::kDlrm)->unbudgeted_tables(&dlrm);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].path, "model.dlrm.embedding");
  tables[0].set_budget(9);
  EXPECT_EQ(dlrm.dlrm().embedding().max_bytes_per_shard(), 9);
  EXPECT_TRUE(ModelKindOf(ModelSpec::kDlrm)->needs_ids);
}

TEST(ModelKindTest, QualityMetricFollowsWhatTheModelPredicts) {
  ModelSpec regression;
  regression.mutable_onnx()->set_loss(ONNX_LOSS_MEAN_SQUARED_ERROR);
  EXPECT_EQ(ModelKindOf(ModelSpec::kOnnx)->quality_metric(regression), "mse");
  EXPECT_EQ(ModelKindOf(ModelSpec::kCnn)->quality_metric(ModelSpec()), "accuracy");
  EXPECT_EQ(ModelKindOf(ModelSpec::kPlugin)->quality_metric(ModelSpec()), "");
}

}  // namespace
}  // namespace pstrain
