#include "bench/sim/shard_tensors.h"

#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

ShardTraffic Traffic() {
  ShardTraffic traffic;
  traffic.job_id = "sim-1";
  traffic.generation = 3;
  traffic.variables = {SimVariable{"dense/w", false, {1000, 10}, 0},
                       SimVariable{"dense/b", false, {10}, 0}, SimVariable{"table", true, {}, 16}};
  traffic.rows = 8;
  traffic.id_space = 100;
  traffic.chunk_bytes = 16384;
  return traffic;
}

PushId Id() {
  PushId id;
  id.set_worker(2);
  id.set_incarnation(77);
  id.set_sequence(5);
  return id;
}

TEST(ShardTensorsTest, ALargeDenseGradientIsCutIntoChunksThatCoverItOnce) {
  ShardTraffic traffic = Traffic();
  traffic.sparse = false;
  const std::vector<PushPullRequest> messages = PushMessages(traffic, Id(), 9, 0);
  ASSERT_GE(messages.size(), 3u);  // 40,040 bytes in 16 KiB messages
  int64_t covered = 0;
  int whole_bias = 0;
  for (size_t m = 0; m < messages.size(); ++m) {
    const PushRequest& push = messages[m].push();
    EXPECT_EQ(push.job_id(), "sim-1");
    EXPECT_EQ(push.id().sequence(), 5u);
    EXPECT_EQ(push.base_version(), 9);
    EXPECT_EQ(push.generation(), 3u);
    EXPECT_EQ(push.end_of_push(), m + 1 == messages.size());
    int64_t bytes = 0;
    for (const NamedTensor& gradient : push.gradients()) {
      ASSERT_TRUE(gradient.has_dense());
      bytes += static_cast<int64_t>(gradient.dense().data().size());
      if (gradient.name() == "dense/b") {
        EXPECT_FALSE(gradient.dense().has_chunk());  // fits whole
        ++whole_bias;
        continue;
      }
      ASSERT_TRUE(gradient.dense().has_chunk());
      EXPECT_EQ(gradient.dense().chunk().offset(), covered);
      EXPECT_EQ(gradient.dense().chunk().total_bytes(), 40000);
      covered += static_cast<int64_t>(gradient.dense().data().size());
    }
    EXPECT_LE(bytes, traffic.chunk_bytes);
  }
  EXPECT_EQ(covered, 40000);
  EXPECT_EQ(whole_bias, 1);
}

TEST(ShardTensorsTest, ASparsePushCarriesItsRowsAndNoDenseGradient) {
  ShardTraffic traffic = Traffic();
  traffic.dense = false;
  const std::vector<PushPullRequest> messages = PushMessages(traffic, Id(), 0, 95);
  ASSERT_EQ(messages.size(), 1u);
  ASSERT_EQ(messages[0].push().gradients_size(), 1);
  const SparseRows& rows = messages[0].push().gradients(0).rows();
  EXPECT_EQ(rows.row_width(), 16);
  ASSERT_EQ(rows.ids_size(), 8);
  EXPECT_EQ(rows.ids(0), 95);
  EXPECT_EQ(rows.ids(5), 0);  // wrapped within the id space
  EXPECT_EQ(rows.values().size(), 8u * 16 * 4);
  EXPECT_TRUE(messages[0].push().end_of_push());
}

TEST(ShardTensorsTest, APullAsksForTheDenseVariablesAndTheRows) {
  const PushPullRequest message = PullMessage(Traffic(), 10);
  const PullRequest& pull = message.pull();
  EXPECT_EQ(pull.job_id(), "sim-1");
  EXPECT_EQ(pull.generation(), 3u);
  ASSERT_EQ(pull.names_size(), 2);
  EXPECT_EQ(pull.names(0), "dense/w");
  ASSERT_EQ(pull.rows_size(), 1);
  EXPECT_EQ(pull.rows(0).name(), "table");
  EXPECT_EQ(pull.rows(0).ids_size(), 8);
  EXPECT_EQ(pull.rows(0).ids(0), 10);
}

TEST(ShardTensorsTest, ShapesAreLearnedFromAPullsAnswers) {
  std::vector<SimVariable> variables = {SimVariable{"w", false, {}, 0},
                                        SimVariable{"t", true, {}, 0}};
  EXPECT_FALSE(ShapesKnown(variables));
  PushPullResponse answer;
  NamedTensor* w = answer.mutable_pull()->add_values();
  w->set_name("w");
  w->mutable_dense()->mutable_shape()->add_dims(4);
  w->mutable_dense()->mutable_shape()->add_dims(3);
  NamedTensor* t = answer.mutable_pull()->add_values();
  t->set_name("t");
  t->mutable_rows()->set_row_width(16);
  ASSERT_TRUE(LearnShapes({answer}, &variables).ok());
  EXPECT_TRUE(ShapesKnown(variables));
  EXPECT_EQ(variables[0].DenseFloats(), 12);
  EXPECT_EQ(variables[1].row_width, 16);

  PushPullResponse stranger;
  stranger.mutable_pull()->add_values()->set_name("other");
  EXPECT_EQ(LearnShapes({stranger}, &variables).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ShardTensorsTest, PushIncarnationsGrowWithTimeAndAreNeverZero) {
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  EXPECT_GT(PushIncarnation(now + absl::Microseconds(1), 0), PushIncarnation(now, 4095));
  EXPECT_NE(PushIncarnation(absl::UnixEpoch(), 0), 0u);
  EXPECT_NE(PushIncarnation(now, 0), PushIncarnation(now, 1));
  EXPECT_NE(PushIncarnation(now, 1), PushIncarnation(now, 2));
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
