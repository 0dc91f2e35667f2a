#include "common/export/checkpoint_loader.h"

#include <vector>

#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/checkpoint_verifier.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/export/testing/parameters_checkpoint.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using export_internal::ShardVariableValues;

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

// A model's worth of values: two dense variables and a table with rows.
std::unique_ptr<ModelParameters> Filled() {
  auto parameters = Parameters();
  for (const char* name : {"w", "b"}) {
    Tensor* value = parameters->mutable_dense(name);
    for (int64_t i = 0; i < value->num_elements(); ++i) value->data<float>()[i] = 0.25f * i + 1;
  }
  for (int64_t id : {-3, 0, 5, 17, 1000000007}) {
    EXPECT_TRUE(parameters->mutable_table("emb")
                    ->Set(id, std::vector<float>{static_cast<float>(id), 2.0f})
                    .ok());
  }
  return parameters;
}

void ExpectSame(const ModelParameters& a, const ModelParameters& b) {
  for (const char* name : {"w", "b"}) {
    const Tensor* x = a.dense(name);
    const Tensor* y = b.dense(name);
    ASSERT_EQ(x->num_elements(), y->num_elements());
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      EXPECT_EQ(x->data<float>()[i], y->data<float>()[i]) << name << "[" << i << "]";
    }
  }
  const EmbeddingTableValues* x = a.table("emb");
  const EmbeddingTableValues* y = b.table("emb");
  ASSERT_EQ(x->SortedIds(), y->SortedIds());
  for (int64_t id : x->SortedIds()) {
    EXPECT_EQ(x->Find(id)[0], y->Find(id)[0]);
    EXPECT_EQ(x->Find(id)[1], y->Find(id)[1]);
  }
}

TEST(LoadCheckpointParametersTest, PutsShardFilesBackTogetherWithoutSlots) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  auto source = Filled();
  for (int shards : {1, 3}) {
    auto written = WriteParametersCheckpoint(env, model_dir, shards, *source, shards, false,
                                             /*num_slots=*/2);
    ASSERT_TRUE(written.ok()) << written.status();
    auto manifest = VerifyCheckpoint(env, CheckpointDir(model_dir, shards));
    ASSERT_TRUE(manifest.ok());
    auto loaded = Parameters();
    absl::Status status =
        LoadCheckpointParameters(env, CheckpointDir(model_dir, shards), *manifest, loaded.get());
    ASSERT_TRUE(status.ok()) << status;
    ExpectSame(*source, *loaded);
  }
}

TEST(LoadCheckpointParametersTest, ADamagedShardFileIsDataLossNamingIt) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  auto manifest = WriteParametersCheckpoint(env, model_dir, 9, *Filled(), 2);
  ASSERT_TRUE(manifest.ok());
  const std::string shard = JoinPath(CheckpointDir(model_dir, 9), ShardFileName(1, 2));
  ASSERT_TRUE(FlipBit(env, shard, 40).ok());
  auto loaded = Parameters();
  absl::Status status =
      LoadCheckpointParameters(env, CheckpointDir(model_dir, 9), *manifest, loaded.get());
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(shard));
}

TEST(LoadCheckpointParametersTest, ACheckpointOfAnotherModelIsRefused) {
  PosixEnv env;
  const std::string model_dir = NewTestDir(env);
  auto manifest = WriteParametersCheckpoint(env, model_dir, 4, *Filled(), 2);
  ASSERT_TRUE(manifest.ok());
  auto other = ModelParameters::Create({Def("w", false, {2, 3}), Def("emb", true, {0, 2})}, 0);
  ASSERT_TRUE(other.ok());
  absl::Status status =
      LoadCheckpointParameters(env, CheckpointDir(model_dir, 4), *manifest, other->get());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("[2, 2]"));
}

}  // namespace
}  // namespace pstrain
