// Many threads pushing, retrying, pulling and snapshotting one shard at
// once. Run under ThreadSanitizer (bazel test --config=tsan) as well: the
// values checked at the end catch lost or doubled updates, TSan catches
// unsynchronised access.

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"
#include "server/ps/parameter_shard.h"
#include "server/ps/push_assembler.h"

namespace pstrain {
namespace {

constexpr int kThreads = 6;
constexpr int kPushesPerThread = 150;
constexpr int64_t kDense = 1000;
constexpr int64_t kDim = 4;

CreateVariablesRequest Request(UpdateMode mode) {
  CreateVariablesRequest r;
  r.set_job_id("job");
  r.set_num_shards(1);
  r.set_num_workers(kThreads);
  r.mutable_training()->set_update_mode(mode);
  r.mutable_optimizer()->set_learning_rate(1.0f);
  VariableSpec* w = r.add_variables();
  w->set_name("w");
  w->set_kind(VARIABLE_KIND_DENSE);
  w->set_dtype(DATA_TYPE_FLOAT32);
  w->mutable_shape()->add_dims(kDense);
  VariableSpec* t = r.add_variables();
  t->set_name("emb");
  t->set_kind(VARIABLE_KIND_EMBEDDING);
  t->set_dtype(DATA_TYPE_FLOAT32);
  t->mutable_shape()->add_dims(0);
  t->mutable_shape()->add_dims(kDim);
  t->mutable_embedding()->set_max_bytes_per_shard(64 * kDim * 4);  // evictions happen
  return r;
}

class ShardConcurrencyTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  prometheus::Registry registry_;
  ShardMetrics metrics_{registry_};
};

TEST_F(ShardConcurrencyTest, AsyncPushesRetriesPullsAndSnapshotsLoseNothing) {
  auto shard =
      ParameterShard::Create(Request(UPDATE_MODE_ASYNC), ShardOptions(), clock_, metrics_).value();
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<float> ones(kDense, 1.0f);
      for (int i = 1; i <= kPushesPerThread; ++i) {
        const std::vector<int64_t> ids = {t * 1000 + i % 100, t, 7};
        const std::vector<float> rows(ids.size() * kDim, 0.5f);
        const std::vector<GradientRef> grads = {GradientRef{0, false, {}, ones},
                                                GradientRef{1, true, ids, rows}};
        const PushKey key{t, 1, static_cast<uint64_t>(i)};
        const PushReply first = shard->Push(key, shard->version(), grads);
        ASSERT_EQ(first.outcome, PUSH_OUTCOME_APPLIED) << first.status;
        if (i % 3 == 0) {  // a retry after a lost reply
          ASSERT_EQ(shard->Push(key, shard->version(), grads).outcome, PUSH_OUTCOME_DUPLICATE);
        }
      }
    });
  }
  threads.emplace_back([&] {  // a reader
    std::vector<float> values(kDense), row(kDim);
    while (!done.load()) {
      ASSERT_TRUE(shard->ReadDense(0, 0, absl::MakeSpan(values)).ok());
      // A read never sees half of an update.
      for (float v : values) ASSERT_EQ(v, values[0]);
      ASSERT_TRUE(shard->ReadRows(1, {7}, row.data()).ok());
    }
  });
  threads.emplace_back([&] {  // a checkpointer
    while (!done.load()) {
      shard->PauseUpdates();
      const ShardCounters c = shard->counters();
      EXPECT_GE(c.version, 0);
      shard->ResumeUpdates();
    }
  });
  for (int t = 0; t < kThreads; ++t) threads[t].join();
  done.store(true);
  threads[kThreads].join();
  threads[kThreads + 1].join();

  const int64_t total = kThreads * kPushesPerThread;
  EXPECT_EQ(shard->version(), total);
  std::vector<float> values(kDense);
  ASSERT_TRUE(shard->ReadDense(0, 0, absl::MakeSpan(values)).ok());
  for (float v : values) ASSERT_EQ(v, -static_cast<float>(total));
  const EmbeddingStats stats = shard->variable(1).table->stats();
  EXPECT_LE(stats.bytes, 64 * kDim * 4);
  EXPECT_GT(stats.evictions, 0);
}

TEST_F(ShardConcurrencyTest, SyncRoundsWithWorkersWaitingForEachVersion) {
  constexpr int kRounds = 60;
  auto shard =
      ParameterShard::Create(Request(UPDATE_MODE_SYNC), ShardOptions(), clock_, metrics_).value();
  std::vector<std::thread> threads;
  std::atomic<int> applied{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<float> grad(kDense, static_cast<float>(t));
      for (int round = 0; round < kRounds; ++round) {
        ASSERT_TRUE(shard->version_gate().WaitAtLeast(round, absl::InfiniteFuture()).ok());
        const PushReply r = shard->Push({t, 1, static_cast<uint64_t>(round + 1)}, round,
                                        {GradientRef{0, false, {}, grad}});
        ASSERT_TRUE(r.outcome == PUSH_OUTCOME_AGGREGATED || r.outcome == PUSH_OUTCOME_APPLIED)
            << r.outcome << " " << r.status;
        if (r.outcome == PUSH_OUTCOME_APPLIED) applied.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(applied.load(), kRounds);
  EXPECT_EQ(shard->version(), kRounds);
  // Each round applies the mean of 0..5 = 2.5.
  std::vector<float> values(kDense);
  ASSERT_TRUE(shard->ReadDense(0, 0, absl::MakeSpan(values)).ok());
  for (float v : values) ASSERT_FLOAT_EQ(v, -2.5f * kRounds);
}

TEST_F(ShardConcurrencyTest, MultiPartPushesFromManyThreadsApplyOnce) {
  auto shard = std::shared_ptr<ParameterShard>(
      ParameterShard::Create(Request(UPDATE_MODE_ASYNC), ShardOptions(), clock_, metrics_).value());
  PushAssembler assembler(PushAssemblerOptions(), clock_, metrics_);
  constexpr int kParts = 4, kPushes = 40;
  std::vector<std::thread> threads;
  for (int p = 0; p < kParts; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 1; i <= kPushes; ++i) {
        PushRequest m;
        m.set_job_id("job");
        m.mutable_id()->set_worker(0);
        m.mutable_id()->set_incarnation(1);
        m.mutable_id()->set_sequence(i);
        m.set_num_parts(kParts);
        m.set_part(p);
        m.set_end_of_push(true);
        NamedTensor* g = m.add_gradients();
        g->set_name("w");
        DenseTensor* d = g->mutable_dense();
        d->set_dtype(DATA_TYPE_FLOAT32);
        d->mutable_shape()->add_dims(kDense);
        const int64_t n = kDense / kParts;
        const std::vector<float> ones(n, 1.0f);
        d->set_data(ones.data(), n * 4);
        d->mutable_chunk()->set_offset(p * n * 4);
        d->mutable_chunk()->set_total_bytes(kDense * 4);
        auto part = assembler.StartPart(shard, m);
        const PushPart::Step step = part->Add(m);
        ASSERT_TRUE(step.reply.has_value());
        ASSERT_TRUE(step.reply->outcome() == PUSH_OUTCOME_PART_RECEIVED ||
                    step.reply->outcome() == PUSH_OUTCOME_APPLIED)
            << step.reply->ShortDebugString();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(shard->version(), kPushes);
  std::vector<float> values(kDense);
  ASSERT_TRUE(shard->ReadDense(0, 0, absl::MakeSpan(values)).ok());
  for (float v : values) ASSERT_EQ(v, -static_cast<float>(kPushes));
  EXPECT_EQ(assembler.pending_pushes(), 0);
  EXPECT_EQ(assembler.pending_bytes(), 0);
}

}  // namespace
}  // namespace pstrain
