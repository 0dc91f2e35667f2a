#include "worker/internal/push_pull_plan.h"

#include <numeric>
#include <utility>

#include "common/placement/row_placement.h"
#include "common/tensor/tensor_proto.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

VariableDef Variable(const std::string& name, VariableKind kind, std::vector<int64_t> shape) {
  VariableDef def;
  def.spec.set_name(name);
  def.spec.set_kind(kind);
  def.spec.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t d : shape) def.spec.mutable_shape()->add_dims(d);
  return def;
}

ShardSlicer TwoShards() {
  google::protobuf::RepeatedPtrField<VariablePlacement> placements;
  VariablePlacement* w = placements.Add();
  w->set_name("w");
  w->set_shard_index(0);
  VariablePlacement* b = placements.Add();
  b->set_name("b");
  b->set_shard_index(0);
  return *ShardSlicer::Create(
      {Variable("w", VARIABLE_KIND_DENSE, {1000}), Variable("b", VARIABLE_KIND_DENSE, {10}),
       Variable("emb", VARIABLE_KIND_EMBEDDING, {0, 4})},
      placements, 2);
}

TEST(PlanShardPullTest, SmallPullIsOneLane) {
  ShardSlicer slicer = TwoShards();
  RowIds rows;
  rows["emb"] = {1, 2, 3, 4, 5, 6, 7, 8};
  RowPositions positions = SliceRows(slicer, rows);
  std::vector<PullLane> lanes = PlanShardPull(slicer, 0, rows, positions, 4, 1 << 20);
  ASSERT_EQ(lanes.size(), 1u);
  EXPECT_EQ(lanes[0].request.names_size(), 2);
  ASSERT_EQ(lanes[0].request.rows_size(), 1);
  for (int64_t id : lanes[0].request.rows(0).ids()) EXPECT_EQ(RowShard(id, 2), 0);
}

TEST(PlanShardPullTest, LargeVariableIsReadAsRangesOverLanes) {
  ShardSlicer slicer = TwoShards();
  RowPositions positions;
  std::vector<PullLane> lanes = PlanShardPull(slicer, 0, {}, positions, 2, 1000);
  ASSERT_EQ(lanes.size(), 2u);
  int64_t covered = 0;
  for (const PullLane& lane : lanes) {
    for (const DenseRange& r : lane.request.ranges()) {
      EXPECT_EQ(r.name(), "w");
      EXPECT_EQ(r.offset(), covered);
      covered += r.count();
    }
  }
  EXPECT_EQ(covered, 1000);
}

TEST(PlanShardPullTest, ShardWithNothingToReadStillAsksForItsVersion) {
  ShardSlicer slicer = TwoShards();
  RowPositions positions;
  std::vector<PullLane> lanes = PlanShardPull(slicer, 1, {}, positions, 2, 1000);
  ASSERT_EQ(lanes.size(), 1u);
  ASSERT_EQ(lanes[0].request.rows_size(), 1);
  EXPECT_EQ(lanes[0].request.rows(0).ids_size(), 0);
}

TEST(BuildShardPushTest, EmptyShareIsStillOnePushMessage) {
  ShardSlicer slicer = TwoShards();
  Gradients gradients;
  gradients.dense["w"] = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({1000}));
  PushRequest header;
  header.set_job_id("j");
  int64_t bytes = -1;
  auto parts = BuildShardPush(slicer, 1, gradients, {}, header, 2, 1 << 20, 1 << 20, &bytes);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  ASSERT_EQ((*parts)[0].size(), 1u);
  EXPECT_TRUE((*parts)[0][0].message.push().end_of_push());
  EXPECT_EQ((*parts)[0][0].message.push().gradients_size(), 0);
  EXPECT_EQ(bytes, 0);
}

TEST(BuildShardPushTest, EveryMessageOfEveryPartCarriesTheWholeHeader) {
  ShardSlicer slicer = TwoShards();
  Gradients gradients;
  gradients.dense["w"] = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({1000}));
  PushRequest header;
  header.set_job_id("j");
  header.mutable_id()->set_worker(1);
  header.mutable_id()->set_incarnation(2);
  header.mutable_id()->set_sequence(3);
  header.set_base_version(4);
  header.set_examples(5);
  header.set_generation(6);
  header.set_valid_until_unix_ms(7);
  header.mutable_origin()->set_lease_id(8);
  header.mutable_origin()->set_epoch(9);
  header.mutable_origin()->mutable_records()->set_end(10);
  int64_t bytes = -1;
  // 4000 bytes in chunks of 1000 over two parts.
  auto parts = BuildShardPush(slicer, 0, gradients, {}, header, 2, 1, 1000, &bytes);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 2u);
  for (size_t p = 0; p < parts->size(); ++p) {
    ASSERT_GE((*parts)[p].size(), 2u);
    for (const OutgoingRequest& message : (*parts)[p]) {
      PushRequest push = message.Materialize().push();
      EXPECT_EQ(push.num_parts(), 2);
      EXPECT_EQ(push.part(), static_cast<int>(p));
      EXPECT_GT(push.gradients_size(), 0);
      push.clear_gradients();
      push.clear_num_parts();
      push.clear_part();
      push.clear_end_of_push();
      EXPECT_EQ(push.SerializeAsString(), header.SerializeAsString()) << push.ShortDebugString();
    }
    EXPECT_TRUE((*parts)[p].back().message.push().end_of_push());
  }
}

// The borrowed pieces are exactly the chunks TensorChunkToProto cuts, so
// shards see the same messages as when the bytes were copied in.
TEST(BuildShardPushTest, BorrowedChunksMatchTensorChunkToProtoBitForBit) {
  ShardSlicer slicer = TwoShards();
  for (const int64_t chunk_bytes : {int64_t{1} << 20, int64_t{1000}, int64_t{999}, int64_t{4}}) {
    Gradients gradients;
    Tensor w = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({1000}));
    float* values = w.data<float>();
    for (int i = 0; i < 1000; ++i) values[i] = static_cast<float>(i) * 0.37f - 11.0f;
    values[7] = -0.0f;
    gradients.dense["w"] = std::move(w);
    gradients.dense["b"] = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({10}));
    int64_t bytes = 0;
    auto parts = BuildShardPush(slicer, 0, gradients, {}, PushRequest(), 1, 1 << 30, chunk_bytes,
                                &bytes);
    ASSERT_TRUE(parts.ok()) << parts.status();
    EXPECT_EQ(bytes, 4040);
    std::vector<DenseTensor> w_pieces;
    for (const OutgoingRequest& message : (*parts)[0]) {
      const PushPullRequest whole = message.Materialize();
      for (const NamedTensor& g : whole.push().gradients()) {
        if (g.name() == "w") w_pieces.push_back(g.dense());
      }
    }
    const Tensor& sent = gradients.dense["w"];
    const std::vector<DenseTensor> expected = TensorToChunks(sent, chunk_bytes);
    ASSERT_EQ(w_pieces.size(), expected.size()) << chunk_bytes;
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(w_pieces[i].SerializeAsString(), expected[i].SerializeAsString())
          << "piece " << i << " of chunks of " << chunk_bytes;
    }
  }
}

TEST(BuildShardPushTest, RefusesGradientsOfUnknownVariables) {
  ShardSlicer slicer = TwoShards();
  Gradients gradients;
  gradients.dense["nope"] = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({3}));
  int64_t bytes = 0;
  EXPECT_TRUE(absl::IsInvalidArgument(
      BuildShardPush(slicer, 0, gradients, {}, PushRequest(), 2, 1 << 20, 1 << 20, &bytes)
          .status()));
}

}  // namespace
}  // namespace internal
}  // namespace worker
}  // namespace pstrain
