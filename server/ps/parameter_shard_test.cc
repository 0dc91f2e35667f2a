#include "server/ps/parameter_shard.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "common/placement/row_placement.h"
#include "common/status/error_reason.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"
#include "server/ps/test_signal.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

VariableSpec Dense(const std::string& name, std::vector<int64_t> dims, float init = 1.0f) {
  VariableSpec v;
  v.set_name(name);
  v.set_kind(VARIABLE_KIND_DENSE);
  v.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t d : dims) v.mutable_shape()->add_dims(d);
  v.mutable_initializer()->set_kind(INITIALIZER_KIND_CONSTANT);
  v.mutable_initializer()->set_value(init);
  return v;
}

VariableSpec Table(const std::string& name, int64_t vocab, int64_t dim) {
  VariableSpec v;
  v.set_name(name);
  v.set_kind(VARIABLE_KIND_EMBEDDING);
  v.set_dtype(DATA_TYPE_FLOAT32);
  v.mutable_shape()->add_dims(vocab);
  v.mutable_shape()->add_dims(dim);
  v.mutable_initializer()->set_kind(INITIALIZER_KIND_CONSTANT);
  v.mutable_initializer()->set_value(1.0f);
  return v;
}

CreateVariablesRequest Request(UpdateMode mode = UPDATE_MODE_ASYNC, int workers = 3) {
  CreateVariablesRequest r;
  r.set_job_id("job-1");
  r.set_shard_index(0);
  r.set_num_shards(1);
  r.set_num_workers(workers);
  r.mutable_training()->set_update_mode(mode);
  r.mutable_optimizer()->set_learning_rate(0.5f);
  *r.add_variables() = Dense("w", {4});
  *r.add_variables() = Table("emb", 100, 2);
  return r;
}

class ParameterShardTest : public ::testing::Test {
 protected:
  std::unique_ptr<ParameterShard> Make(const CreateVariablesRequest& r) {
    absl::StatusOr<std::unique_ptr<ParameterShard>> shard =
        ParameterShard::Create(r, ShardOptions(), clock_, metrics_);
    EXPECT_TRUE(shard.ok()) << shard.status();
    return std::move(shard).value();
  }
  absl::Status CreateError(const CreateVariablesRequest& r) {
    return ParameterShard::Create(r, ShardOptions(), clock_, metrics_).status();
  }

  FakeClock clock_;
  prometheus::Registry registry_;
  ShardMetrics metrics_{registry_};
};

std::vector<float> ReadAll(const ParameterShard& s, int var = 0) {
  std::vector<float> out(s.variable(var).num_elements);
  EXPECT_TRUE(s.ReadDense(var, 0, absl::MakeSpan(out)).ok());
  return out;
}

PushReply PushDense(ParameterShard& s, PushKey key, int64_t base, std::vector<float> g) {
  const GradientRef ref{0, false, {}, g};
  return s.Push(key, base, {ref});
}

TEST_F(ParameterShardTest, CreateRefusesBadRequestsNamingTheField) {
  CreateVariablesRequest r = Request();
  r.set_job_id("bad job");
  EXPECT_THAT(CreateError(r).message(), HasSubstr("job_id"));
  r = Request();
  r.set_shard_index(1);
  EXPECT_THAT(CreateError(r).message(), HasSubstr("shard_index"));
  r = Request();
  r.mutable_variables(0)->set_dtype(DATA_TYPE_FLOAT64);
  EXPECT_THAT(CreateError(r).message(), HasSubstr("variables[0].dtype"));
  r = Request();
  *r.add_variables() = Dense("w", {2});
  EXPECT_THAT(CreateError(r).message(), HasSubstr("appears twice"));
  r = Request();
  r.mutable_variables(1)->mutable_shape()->add_dims(3);
  EXPECT_THAT(CreateError(r).message(), HasSubstr("variables[1].shape"));
  r = Request();
  r.mutable_variables(1)->mutable_embedding()->set_admit_after(3);
  EXPECT_THAT(CreateError(r).message(), HasSubstr("dynamic tables"));
  r = Request();
  r.mutable_optimizer()->mutable_adam()->set_beta1(2);
  EXPECT_THAT(CreateError(r).message(), HasSubstr("optimizer.adam.beta1"));
  r = Request(UPDATE_MODE_SYNC);
  r.mutable_training()->set_replicas_to_aggregate(4);
  EXPECT_THAT(CreateError(r).message(), HasSubstr("replicas_to_aggregate"));
  for (const CreateVariablesRequest& bad : {r}) {
    EXPECT_EQ(CreateError(bad).code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST_F(ParameterShardTest, CreateRefusesVariablesOverTheByteLimit) {
  ShardOptions options;
  options.max_variable_bytes = 1000;
  CreateVariablesRequest r = Request();
  *r.add_variables() = Dense("big", {1000});
  EXPECT_EQ(ParameterShard::Create(r, options, clock_, metrics_).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(ParameterShardTest, AsyncPushAppliesOnceAndRetriesAreDuplicates) {
  auto s = Make(Request());
  const PushReply first = PushDense(*s, {0, 1, 1}, 0, {1, 2, 3, 4});
  EXPECT_EQ(first.outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(first.version, 1);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, -0.5f, -1.0f));
  // The reply was lost; the worker sends the same push again.
  const PushReply retry = PushDense(*s, {0, 1, 1}, 0, {1, 2, 3, 4});
  EXPECT_EQ(retry.outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, -0.5f, -1.0f));
  EXPECT_EQ(s->version(), 1);
  // The worker restarts: a new incarnation starts its sequence again.
  EXPECT_EQ(PushDense(*s, {0, 2, 1}, 1, {0, 0, 0, 2}).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, -0.5f, -2.0f));
  // The old incarnation's late push is refused.
  const PushReply old = PushDense(*s, {0, 1, 2}, 1, {9, 9, 9, 9});
  EXPECT_EQ(old.outcome, PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(old.status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(ReasonOf(old.status), ERROR_REASON_INCARNATION_SUPERSEDED) << old.status;
  EXPECT_EQ(s->version(), 2);
}

TEST_F(ParameterShardTest, SyncRoundAveragesRWorkersAndRefusesLateGradients) {
  CreateVariablesRequest r = Request(UPDATE_MODE_SYNC, 3);
  r.mutable_training()->set_replicas_to_aggregate(2);  // one backup worker
  auto s = Make(r);
  EXPECT_EQ(PushDense(*s, {0, 1, 1}, 0, {2, 0, 0, 0}).outcome, PUSH_OUTCOME_AGGREGATED);
  EXPECT_THAT(ReadAll(*s), ElementsAre(1, 1, 1, 1));  // not applied yet
  // The same worker again in the same round does not count twice.
  const PushReply twice = PushDense(*s, {0, 1, 2}, 0, {2, 0, 0, 0});
  EXPECT_EQ(twice.outcome, PUSH_OUTCOME_STALE);
  EXPECT_EQ(ReasonOf(twice.status), ERROR_REASON_WRONG_ROUND) << twice.status;
  const PushReply second = PushDense(*s, {1, 1, 1}, 0, {0, 4, 0, 0});
  EXPECT_EQ(second.outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(second.version, 1);
  // mean = (1, 2, 0, 0); lr 0.5.
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, 1.0f, 1.0f));
  // The backup's gradient for version 0 arrives late: STALE, also on retry.
  EXPECT_EQ(PushDense(*s, {2, 1, 1}, 0, {8, 8, 8, 8}).outcome, PUSH_OUTCOME_STALE);
  const PushReply late = PushDense(*s, {2, 1, 1}, 0, {8, 8, 8, 8});
  EXPECT_EQ(late.outcome, PUSH_OUTCOME_STALE);
  EXPECT_EQ(ReasonOf(late.status), ERROR_REASON_WRONG_ROUND) << late.status;
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, 1.0f, 1.0f));
  // A retry of an aggregated push is a duplicate, not a second contribution.
  EXPECT_EQ(PushDense(*s, {0, 1, 1}, 0, {2, 0, 0, 0}).outcome, PUSH_OUTCOME_DUPLICATE);
  // Next round, version 1, with the former backup.
  EXPECT_EQ(PushDense(*s, {2, 1, 2}, 1, {0, 0, 2, 0}).outcome, PUSH_OUTCOME_AGGREGATED);
  EXPECT_EQ(PushDense(*s, {0, 1, 3}, 1, {0, 0, 2, 0}).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, 0.0f, 1.0f));
  EXPECT_EQ(s->version(), 2);
}

TEST_F(ParameterShardTest, SyncSlotPerWorkerCountsATakenUpSlotOnce) {
  // Every worker in each round: one slot per worker rank.
  auto s = Make(Request(UPDATE_MODE_SYNC, 2));
  EXPECT_EQ(PushDense(*s, {0, 1, 1}, 0, {2, 0, 0, 0}).outcome, PUSH_OUTCOME_AGGREGATED);
  // Worker 0 restarts and pushes the same round's batch again: its slot is
  // in, so this is a duplicate, not a second contribution nor a late one.
  EXPECT_EQ(PushDense(*s, {0, 2, 1}, 0, {2, 0, 0, 0}).outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(s->version(), 0);
  EXPECT_EQ(PushDense(*s, {1, 1, 1}, 0, {0, 4, 0, 0}).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, 1.0f, 1.0f));
  // A push for a completed round holds a slot that round already had.
  EXPECT_EQ(PushDense(*s, {0, 2, 2}, 0, {9, 9, 9, 9}).outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, 1.0f, 1.0f));
  // The restarted worker goes on with the next round; the old incarnation
  // stays refused.
  EXPECT_EQ(PushDense(*s, {0, 2, 3}, 1, {0, 0, 2, 0}).outcome, PUSH_OUTCOME_AGGREGATED);
  EXPECT_EQ(ReasonOf(PushDense(*s, {0, 1, 2}, 1, {0, 0, 2, 0}).status),
            ERROR_REASON_INCARNATION_SUPERSEDED);
  EXPECT_EQ(PushDense(*s, {1, 1, 2}, 1, {0, 0, 2, 0}).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, 0.0f, 1.0f));
  EXPECT_EQ(s->version(), 2);
}

TEST_F(ParameterShardTest, SyncRoundSumsInWorkerOrderWhateverTheArrivalOrder) {
  // Terms whose float sum depends on the order: in rank order
  // (1e8 + -1e8) + 1 = 1; in another order the 1 is lost.
  const std::vector<std::vector<float>> grads = {
      {1e8f, 0, 0, 0}, {-1e8f, 0, 0, 0}, {1.0f, 0, 0, 0}};
  std::vector<int> order = {0, 1, 2};
  std::vector<std::vector<float>> results;
  do {
    CreateVariablesRequest r = Request(UPDATE_MODE_SYNC, 3);
    r.mutable_optimizer()->set_learning_rate(3.0f);
    auto s = Make(r);
    for (int worker : order) {
      const PushReply reply = PushDense(*s, {worker, 1, 1}, 0, grads[worker]);
      ASSERT_NE(reply.outcome, PUSH_OUTCOME_REJECTED) << reply.status;
    }
    ASSERT_EQ(s->version(), 1);
    results.push_back(ReadAll(*s));
  } while (std::next_permutation(order.begin(), order.end()));
  // Sum 1, mean 1/3, lr 3: about 1 - 1 = 0 (the 1 was not lost), bit for
  // bit the same in every order.
  for (const std::vector<float>& values : results) {
    EXPECT_EQ(std::memcmp(values.data(), results[0].data(), sizeof(float) * 4), 0);
    EXPECT_NEAR(values[0], 0.0f, 1e-6);
  }
}

TEST_F(ParameterShardTest, BoundedStalenessRefusesPushesMoreThanSBehind) {
  CreateVariablesRequest r = Request(UPDATE_MODE_BOUNDED_STALENESS, 2);
  r.mutable_training()->set_staleness_bound(2);
  auto s = Make(r);
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    ASSERT_EQ(PushDense(*s, {0, 1, seq}, seq - 1, {0, 0, 0, 0}).outcome, PUSH_OUTCOME_APPLIED);
  }
  const PushReply behind = PushDense(*s, {1, 1, 1}, 0, {1, 1, 1, 1});  // 3 behind
  EXPECT_EQ(behind.outcome, PUSH_OUTCOME_STALE);
  EXPECT_EQ(behind.status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(ReasonOf(behind.status), ERROR_REASON_STALE_VERSION) << behind.status;
  EXPECT_EQ(PushDense(*s, {1, 1, 2}, 1, {1, 1, 1, 1}).outcome, PUSH_OUTCOME_APPLIED);  // 2 behind
  EXPECT_EQ(s->version(), 4);
  const PushReply ahead = PushDense(*s, {1, 1, 3}, 9, {1, 1, 1, 1});
  EXPECT_EQ(ahead.outcome, PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(ahead.status.code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ParameterShardTest, InvalidPushesChangeNothing) {
  auto s = Make(Request());
  const std::vector<float> four = {1, 1, 1, 1}, three = {1, 1, 1}, row = {1, 1};
  const std::vector<int64_t> far = {100}, negative = {-1}, ok_id = {3};
  struct Case {
    const char* what;
    PushKey key;
    std::vector<GradientRef> grads;
  } cases[] = {
      {"worker out of range", {3, 1, 1}, {GradientRef{0, false, {}, four}}},
      {"sequence 0", {0, 1, 0}, {GradientRef{0, false, {}, four}}},
      {"wrong size", {0, 1, 1}, {GradientRef{0, false, {}, three}}},
      {"no such variable", {0, 1, 1}, {GradientRef{7, false, {}, four}}},
      {"dense gradient for a table", {0, 1, 1}, {GradientRef{1, false, {}, four}}},
      {"id out of range", {0, 1, 1}, {GradientRef{1, true, far, row}}},
      {"negative id", {0, 1, 1}, {GradientRef{1, true, negative, row}}},
      {"row size", {0, 1, 1}, {GradientRef{1, true, ok_id, three}}},
      {"twice the same variable",
       {0, 1, 1},
       {GradientRef{0, false, {}, four}, GradientRef{0, false, {}, four}}},
  };
  for (const Case& c : cases) {
    const PushReply reply = s->Push(c.key, 0, c.grads);
    EXPECT_EQ(reply.outcome, PUSH_OUTCOME_REJECTED) << c.what;
    EXPECT_EQ(reply.status.code(), absl::StatusCode::kInvalidArgument) << c.what;
  }
  EXPECT_EQ(s->version(), 0);
  EXPECT_THAT(ReadAll(*s), ElementsAre(1, 1, 1, 1));
  // A key refused for being malformed was not remembered.
  EXPECT_EQ(PushDense(*s, {0, 1, 1}, 0, {0, 0, 0, 0}).outcome, PUSH_OUTCOME_APPLIED);
}

TEST_F(ParameterShardTest, DenseGradientInSegmentsMustCoverEachElementOnce) {
  auto s = Make(Request());
  const std::vector<float> head = {1, 2}, tail = {3, 4}, one = {9};
  const std::vector<DenseSegment> out_of_order = {{2, tail}, {0, head}};
  EXPECT_EQ(s->Push({0, 1, 1}, 0, {GradientRef{0, false, {}, {}, out_of_order}}).outcome,
            PUSH_OUTCOME_APPLIED);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, -0.5f, -1.0f));
  const std::vector<DenseSegment> gap = {{0, head}, {3, one}};
  const std::vector<DenseSegment> overlap = {{0, head}, {1, tail}, {3, one}};
  for (const auto& bad : {gap, overlap}) {
    const PushReply r = s->Push({0, 1, 2}, 1, {GradientRef{0, false, {}, {}, bad}});
    EXPECT_EQ(r.outcome, PUSH_OUTCOME_REJECTED);
    EXPECT_THAT(r.status.message(), HasSubstr("exactly once"));
  }
  EXPECT_EQ(s->version(), 1);
}

TEST_F(ParameterShardTest, RowsOnAnotherShardAreRefused) {
  CreateVariablesRequest r = Request();
  r.set_num_shards(4);
  r.set_shard_index(1);
  auto s = Make(r);
  int64_t mine = 0, theirs = 0;
  while (RowShard(mine, 4) != 1) ++mine;
  while (RowShard(theirs, 4) == 1) ++theirs;
  std::vector<float> out(2);
  EXPECT_TRUE(s->ReadRows(1, {mine}, out.data()).ok());
  const absl::Status st = s->ReadRows(1, {theirs}, out.data());
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("belongs to shard"));
}

// Clipping is the worker's (worker/internal/step_runner.h): a shard sees
// only its slice of a worker's gradient, whose norm is not the gradient's.
// So a shard applies what it is pushed, above clip_norm too, and only
// refuses a clip_norm that no worker could clip by.
TEST_F(ParameterShardTest, AppliesGradientsAsPushedWhateverTheClipNorm) {
  CreateVariablesRequest r = Request();
  r.mutable_optimizer()->set_clip_norm(1.0f);
  r.mutable_optimizer()->set_learning_rate(1.0f);
  auto s = Make(r);
  const std::vector<float> g = {3, 0, 0, 0};
  const std::vector<float> rows = {0, 4};
  const std::vector<int64_t> ids = {5};
  // Norm 5 over both variables, unscaled.
  const PushReply reply =
      s->Push({0, 1, 1}, 0, {GradientRef{0, false, {}, g}, GradientRef{1, true, ids, rows}});
  ASSERT_EQ(reply.outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_THAT(ReadAll(*s), ElementsAre(-2, 1, 1, 1));
  std::vector<float> row(2);
  ASSERT_TRUE(s->ReadRows(1, ids, row.data()).ok());
  EXPECT_THAT(row, ElementsAre(1, -3));

  for (const float bad : {-1.0f, std::numeric_limits<float>::infinity(), NAN}) {
    r.mutable_optimizer()->set_clip_norm(bad);
    const absl::StatusOr<std::unique_ptr<ParameterShard>> refused =
        ParameterShard::Create(r, ShardOptions(), clock_, metrics_);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("optimizer.clip_norm")) << bad;
  }
}

TEST_F(ParameterShardTest, LearningRateFollowsTheScheduleByVersion) {
  CreateVariablesRequest r = Request();
  r.mutable_optimizer()->set_learning_rate(1.0f);
  r.mutable_optimizer()->mutable_schedule()->mutable_step()->set_step_size(1);
  r.mutable_optimizer()->mutable_schedule()->mutable_step()->set_factor(0.5f);
  auto s = Make(r);
  PushDense(*s, {0, 1, 1}, 0, {1, 0, 0, 0});  // lr 1
  PushDense(*s, {0, 1, 2}, 1, {1, 0, 0, 0});  // lr 0.5
  EXPECT_FLOAT_EQ(ReadAll(*s)[0], -0.5f);
}

// Sparse updates of every optimizer give, on the rows pushed, what the
// dense rule gives on those rows alone, and leave other rows (and their
// slots) alone.
TEST_F(ParameterShardTest, SparseUpdatesMatchTheDenseRuleOnTheirRowsOnly) {
  std::vector<OptimizerSpec> specs(6);
  specs[0].mutable_sgd();
  specs[1].mutable_momentum()->set_nesterov(true);
  specs[2].mutable_adagrad();
  specs[3].mutable_adam();
  specs[4].mutable_ftrl()->set_l1(0.001f);
  specs[5].mutable_momentum();
  for (OptimizerSpec spec : specs) {
    SCOPED_TRACE(spec.ShortDebugString());
    spec.set_learning_rate(0.1f);
    CreateVariablesRequest r = Request();
    *r.mutable_optimizer() = spec;
    r.clear_variables();
    *r.add_variables() = Dense("dense_rows", {5, 2}, 1.0f);
    *r.add_variables() = Table("table", 0, 2);
    auto s = Make(r);
    auto opt = Optimizer::Create(spec).value();
    // Reference: one row of two elements with its own slots.
    std::vector<float> ref_w = {1, 1};
    std::vector<std::vector<float>> ref_slots;
    for (int k = 0; k < opt->num_slots(); ++k)
      ref_slots.emplace_back(2, opt->slot_initial_value(k));
    const std::vector<int64_t> ids = {3, 3};  // repeated ids are summed
    for (int t = 1; t <= 3; ++t) {
      const std::vector<float> g = {0.1f * t, -0.2f, 0.3f, 0.05f * t};
      const PushReply reply = s->Push({0, 1, static_cast<uint64_t>(t)}, t - 1,
                                      {GradientRef{0, true, ids, g}, GradientRef{1, true, ids, g}});
      ASSERT_EQ(reply.outcome, PUSH_OUTCOME_APPLIED) << reply.status;
      const std::vector<float> sum = {g[0] + g[2], g[1] + g[3]};
      std::vector<float*> ptrs;
      for (auto& sl : ref_slots) ptrs.push_back(sl.data());
      opt->Apply({0.1f, t, 1.0f}, sum.data(), 2, ref_w.data(), ptrs.data());
    }
    std::vector<float> dense(10);
    ASSERT_TRUE(s->ReadDense(0, 0, absl::MakeSpan(dense)).ok());
    for (int i = 0; i < 10; ++i) {
      EXPECT_FLOAT_EQ(dense[i], i / 2 == 3 ? ref_w[i % 2] : 1.0f) << "element " << i;
    }
    std::vector<float> rows(4);
    ASSERT_TRUE(s->ReadRows(1, {3, 4}, rows.data()).ok());
    EXPECT_THAT(rows,
                ElementsAre(::testing::FloatEq(ref_w[0]), ::testing::FloatEq(ref_w[1]), 1, 1));
    EXPECT_EQ(s->variable(1).table->stats().rows, 1);
  }
}

TEST_F(ParameterShardTest, PullWaitsForAVersionWithADeadline) {
  auto s = Make(Request(UPDATE_MODE_SYNC, 1));
  absl::StatusOr<int64_t> got = absl::UnknownError("not run");
  TestSignal done;
  s->version_gate().WhenAtLeast(1, clock_.Now() + absl::Seconds(5), [&](absl::StatusOr<int64_t> v) {
    got = v;
    done.Notify();
  });
  std::thread worker([&] { PushDense(*s, {0, 1, 1}, 0, {1, 1, 1, 1}); });
  done.Wait();
  worker.join();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 1);
  // Nobody pushes for version 2: the read ends at its deadline.
  TestSignal expired;
  absl::Status status;
  s->version_gate().WhenAtLeast(2, clock_.Now() + absl::Seconds(5), [&](absl::StatusOr<int64_t> v) {
    status = v.status();
    expired.Notify();
  });
  clock_.Advance(absl::Seconds(6));
  expired.Wait();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(ParameterShardTest, CountersLeaveOutAnUnfinishedRound) {
  auto s = Make(Request(UPDATE_MODE_SYNC, 2));
  ASSERT_EQ(PushDense(*s, {0, 1, 1}, 0, {1, 1, 1, 1}).outcome, PUSH_OUTCOME_AGGREGATED);
  s->PauseUpdates();
  const ShardCounters c = s->counters();
  ASSERT_TRUE(s->RestoreCounters(c).ok());
  s->ResumeUpdates();
  EXPECT_EQ(c.version, 0);
  // The round was dropped with the restore; the retried push counts again.
  EXPECT_EQ(PushDense(*s, {0, 1, 1}, 0, {1, 1, 1, 1}).outcome, PUSH_OUTCOME_AGGREGATED);
  EXPECT_EQ(PushDense(*s, {1, 1, 1}, 0, {1, 1, 1, 1}).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.5f, 0.5f, 0.5f));
}

TEST_F(ParameterShardTest, LedgerBooksAppliedPushesAndTheirRecordsOnce) {
  auto s = Make(Request());
  const std::vector<float> g = {1, 1, 1, 1};
  const GradientRef ref{0, false, {}, g};
  PushSource first{8, LeaseSlice{7, 0, 100, 108}};
  PushSource second{8, LeaseSlice{7, 0, 108, 116}};
  EXPECT_EQ(s->Push({0, 1, 1}, 0, {ref}, first).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(s->Push({0, 1, 1}, 0, {ref}, first).outcome, PUSH_OUTCOME_DUPLICATE);
  EXPECT_EQ(s->Push({0, 1, 2}, 1, {ref}, second).outcome, PUSH_OUTCOME_APPLIED);
  const PushLedger ledger = *s->ReadLedger({7}, LedgerRead::kOnly);
  EXPECT_EQ(ledger.applied_pushes(), 2);  // the retry is not counted
  EXPECT_EQ(ledger.applied_examples(), 16);
  EXPECT_EQ(ledger.applied_digest(), AppliedPushLedger::PushDigest({0, 1, 1}) +
                                         AppliedPushLedger::PushDigest({0, 1, 2}));
  ASSERT_EQ(ledger.leases_size(), 1);
  ASSERT_EQ(ledger.leases(0).applied_size(), 1);
  EXPECT_EQ(ledger.leases(0).applied(0).begin(), 100);
  EXPECT_EQ(ledger.leases(0).applied(0).end(), 116);
}

TEST_F(ParameterShardTest, PushesOfASealedLeaseAreRefusedAndChangeNothing) {
  auto s = Make(Request());
  const std::vector<float> g = {1, 1, 1, 1};
  const GradientRef ref{0, false, {}, g};
  EXPECT_EQ(s->Push({0, 1, 1}, 0, {ref}, {8, LeaseSlice{7, 0, 0, 8}}).outcome,
            PUSH_OUTCOME_APPLIED);
  const PushLedger sealed = *s->ReadLedger({7}, LedgerRead::kSeal);
  EXPECT_TRUE(sealed.leases(0).sealed());
  const std::vector<float> before = ReadAll(*s);
  const PushReply late = s->Push({0, 1, 2}, 1, {ref}, {8, LeaseSlice{7, 0, 8, 16}});
  EXPECT_EQ(late.outcome, PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(late.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReasonOf(late.status), ERROR_REASON_LEASE_SEALED) << late.status;
  EXPECT_THAT(late.status.message(), HasSubstr("data lease 7 was handed back"));
  EXPECT_EQ(ReadAll(*s), before);
  EXPECT_EQ(s->ReadLedger({}, LedgerRead::kOnly)->applied_pushes(), 1);
  // Other leases go on.
  EXPECT_EQ(s->Push({0, 1, 3}, 1, {ref}, {8, LeaseSlice{8, 0, 16, 24}}).outcome,
            PUSH_OUTCOME_APPLIED);
}

// With backup workers a lost worker's lease is handed back by the ledger
// too: a sync round books its contributions as it is applied, and a read
// counts those of the open round, which will be applied whatever happens to
// their worker.
TEST_F(ParameterShardTest, SyncRoundsBookTheirContributionsAndTheOpenRoundCountsAsTrained) {
  CreateVariablesRequest r = Request(UPDATE_MODE_SYNC, 3);
  r.mutable_training()->set_replicas_to_aggregate(2);  // one backup worker
  auto s = Make(r);
  const std::vector<float> g = {1, 1, 1, 1};
  const GradientRef ref{0, false, {}, g};
  EXPECT_EQ(s->Push({0, 1, 1}, 0, {ref}, {8, LeaseSlice{7, 0, 0, 8}}).outcome,
            PUSH_OUTCOME_AGGREGATED);
  // Worker 0 is lost: its lease is read and sealed while its contribution
  // waits in the open round.
  const PushLedger sealed = *s->ReadLedger({7}, LedgerRead::kSeal);
  ASSERT_EQ(sealed.leases_size(), 1);
  EXPECT_TRUE(sealed.leases(0).sealed());
  ASSERT_EQ(sealed.leases(0).applied_size(), 1);
  EXPECT_EQ(sealed.leases(0).applied(0).begin(), 0);
  EXPECT_EQ(sealed.leases(0).applied(0).end(), 8);
  EXPECT_EQ(s->Push({0, 1, 2}, 0, {ref}, {8, LeaseSlice{7, 0, 8, 16}}).outcome,
            PUSH_OUTCOME_REJECTED);
  // The round closes with another worker's gradient: both are booked.
  EXPECT_EQ(s->Push({1, 1, 1}, 0, {ref}, {8, LeaseSlice{8, 0, 16, 24}}).outcome,
            PUSH_OUTCOME_APPLIED);
  const PushLedger after = *s->ReadLedger({}, LedgerRead::kOnly);
  EXPECT_EQ(after.applied_pushes(), 2);
  EXPECT_EQ(after.applied_examples(), 16);
  EXPECT_EQ(after.applied_digest(), AppliedPushLedger::PushDigest({0, 1, 1}) +
                                        AppliedPushLedger::PushDigest({1, 1, 1}));
  EXPECT_EQ(after.leases_size(), 2);
}

// Agreed sync rounds (several shards): pushes are staged, and the
// coordinator's CommitRound decides which of them form the round.
CreateVariablesRequest Agreed(int workers) {
  CreateVariablesRequest r = Request(UPDATE_MODE_SYNC, workers);
  r.set_num_shards(2);
  r.set_rounds_agreed(true);
  return r;
}

PushSource FromLease(int64_t lease, int64_t begin) {
  return PushSource{8, LeaseSlice{lease, 0, begin, begin + 8}};
}

TEST_F(ParameterShardTest, AgreedRoundStagesPushesAndAppliesNothingUntilCommitted) {
  auto s = Make(Agreed(2));
  const PushReply staged = PushDense(*s, {0, 1, 1}, 0, {2, 0, 0, 0});
  EXPECT_EQ(staged.outcome, PUSH_OUTCOME_AGGREGATED);
  EXPECT_EQ(staged.version, 0);
  EXPECT_EQ(PushDense(*s, {1, 1, 1}, 0, {0, 4, 0, 0}).outcome, PUSH_OUTCOME_AGGREGATED);
  // Every worker pushed, yet nothing is applied: the round is not committed.
  EXPECT_THAT(ReadAll(*s), ElementsAre(1, 1, 1, 1));
  EXPECT_EQ(s->version(), 0);
  // A retry of a staged push is a duplicate.
  EXPECT_EQ(PushDense(*s, {0, 1, 1}, 0, {2, 0, 0, 0}).outcome, PUSH_OUTCOME_DUPLICATE);
  // A second batch of the same incarnation into the same round is late.
  const PushReply twice = PushDense(*s, {0, 1, 2}, 0, {9, 9, 9, 9});
  EXPECT_EQ(twice.outcome, PUSH_OUTCOME_STALE);
  EXPECT_EQ(ReasonOf(twice.status), ERROR_REASON_WRONG_ROUND) << twice.status;
  absl::StatusOr<int64_t> committed = s->CommitRound(0, {{1, 1, 1}, {0, 1, 1}});
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(*committed, 1);
  EXPECT_EQ(s->version(), 1);
  // mean = (1, 2, 0, 0); lr 0.5.
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.5f, 0.0f, 1.0f, 1.0f));
  EXPECT_EQ(PushDense(*s, {0, 1, 1}, 0, {2, 0, 0, 0}).outcome, PUSH_OUTCOME_DUPLICATE);
}

TEST_F(ParameterShardTest, AgreedRoundANewerIncarnationReplacesTheStagedPush) {
  auto s = Make(Agreed(2));
  ASSERT_EQ(PushDense(*s, {0, 1, 1}, 0, {8, 8, 8, 8}).outcome, PUSH_OUTCOME_AGGREGATED);
  // Worker 0 restarted and pushed the round again.
  ASSERT_EQ(PushDense(*s, {0, 2, 1}, 0, {2, 0, 0, 0}).outcome, PUSH_OUTCOME_AGGREGATED);
  const PushReply old = PushDense(*s, {0, 1, 1}, 0, {8, 8, 8, 8});
  EXPECT_EQ(old.outcome, PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(ReasonOf(old.status), ERROR_REASON_INCARNATION_SUPERSEDED) << old.status;
  // The replaced push is gone: a commit naming it changes nothing.
  const absl::Status missing = s->CommitRound(0, {{0, 1, 1}}).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReasonOf(missing), ERROR_REASON_ROUND_MEMBER_MISSING) << missing;
  EXPECT_EQ(s->version(), 0);
  EXPECT_THAT(ReadAll(*s), ElementsAre(1, 1, 1, 1));
  EXPECT_EQ(s->ReadLedger({}, LedgerRead::kOnly)->applied_pushes(), 0);
  ASSERT_EQ(*s->CommitRound(0, {{0, 2, 1}}), 1);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0.0f, 1.0f, 1.0f, 1.0f));
}

TEST_F(ParameterShardTest, AgreedRoundDroppingAPushKeepsItsWorkersNewerIncarnation) {
  auto s = Make(Agreed(2));
  ASSERT_EQ(PushDense(*s, {1, 1, 1}, 0, {0, 0, 0, 0}).outcome, PUSH_OUTCOME_AGGREGATED);
  ASSERT_EQ(*s->CommitRound(0, {{1, 1, 1}}), 1);
  ASSERT_EQ(PushDense(*s, {0, 1, 2}, 1, {2, 2, 2, 2}).outcome, PUSH_OUTCOME_AGGREGATED);
  // Worker 0 restarted; its new incarnation's first push was computed
  // from round 0 and is late, so the old incarnation's push stays staged.
  ASSERT_EQ(PushDense(*s, {0, 2, 1}, 0, {4, 4, 4, 4}).outcome, PUSH_OUTCOME_STALE);
  ASSERT_EQ(PushDense(*s, {1, 1, 2}, 1, {0, 0, 0, 0}).outcome, PUSH_OUTCOME_AGGREGATED);
  ASSERT_EQ(*s->CommitRound(1, {{1, 1, 2}}), 2);
  // Dropping the old incarnation's push did not bring that incarnation back.
  const PushReply old = PushDense(*s, {0, 1, 3}, 2, {2, 2, 2, 2});
  EXPECT_EQ(old.outcome, PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(ReasonOf(old.status), ERROR_REASON_INCARNATION_SUPERSEDED) << old.status;
  EXPECT_EQ(PushDense(*s, {0, 2, 2}, 2, {2, 2, 2, 2}).outcome, PUSH_OUTCOME_AGGREGATED);
}

TEST_F(ParameterShardTest, AgreedRoundAppliesExactlyItsMembersInRankOrder) {
  // Worker 3 is a backup whose push the round does not take. The others'
  // terms sum in float to 1 in rank order only.
  const std::vector<std::vector<float>> grads = {
      {1e8f, 0, 0, 0}, {-1e8f, 0, 0, 0}, {1.0f, 0, 0, 0}, {5, 5, 5, 5}};
  std::vector<int> order = {0, 1, 2, 3};
  std::vector<std::vector<float>> results;
  do {
    CreateVariablesRequest r = Agreed(4);
    r.mutable_training()->set_replicas_to_aggregate(3);
    r.mutable_optimizer()->set_learning_rate(3.0f);
    auto s = Make(r);
    for (int worker : order) {
      ASSERT_EQ(PushDense(*s, {worker, 1, 1}, 0, grads[worker]).outcome, PUSH_OUTCOME_AGGREGATED);
    }
    ASSERT_EQ(*s->CommitRound(0, {{2, 1, 1}, {0, 1, 1}, {1, 1, 1}}), 1);
    results.push_back(ReadAll(*s));
    // The backup's push was dropped: late, also on retry and for a new
    // push of that round.
    const PushReply late = PushDense(*s, {3, 1, 1}, 0, grads[3]);
    EXPECT_EQ(late.outcome, PUSH_OUTCOME_STALE);
    EXPECT_EQ(ReasonOf(late.status), ERROR_REASON_WRONG_ROUND) << late.status;
    EXPECT_EQ(PushDense(*s, {3, 1, 2}, 0, grads[3]).outcome, PUSH_OUTCOME_STALE);
    const PushLedger ledger = *s->ReadLedger({}, LedgerRead::kOnly);
    EXPECT_EQ(ledger.applied_pushes(), 3);
    EXPECT_EQ(ledger.applied_digest(), AppliedPushLedger::PushDigest({0, 1, 1}) +
                                           AppliedPushLedger::PushDigest({1, 1, 1}) +
                                           AppliedPushLedger::PushDigest({2, 1, 1}));
  } while (std::next_permutation(order.begin(), order.end()));
  // Sum 1, mean 1/3, lr 3: 1 - 1 = 0 on the first element, the others
  // untouched, bit for bit the same whatever order the pushes came in.
  for (const std::vector<float>& values : results) {
    EXPECT_EQ(std::memcmp(values.data(), results[0].data(), sizeof(float) * 4), 0);
  }
  EXPECT_NEAR(results[0][0], 0.0f, 1e-6);
  EXPECT_THAT(std::vector<float>(results[0].begin() + 1, results[0].end()), ElementsAre(1, 1, 1));
}

TEST_F(ParameterShardTest, AgreedRoundCommitIsIdempotentAndRefusesWhatItCannotApply) {
  auto s = Make(Agreed(2));
  ASSERT_EQ(PushDense(*s, {0, 1, 1}, 0, {2, 2, 2, 2}).outcome, PUSH_OUTCOME_AGGREGATED);
  const absl::Status ahead = s->CommitRound(1, {{0, 1, 1}}).status();
  EXPECT_EQ(ahead.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReasonOf(ahead), ERROR_REASON_WRONG_ROUND) << ahead;
  EXPECT_EQ(s->CommitRound(0, {{0, 1, 1}, {0, 1, 1}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->CommitRound(0, {{2, 1, 1}}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s->version(), 0);
  ASSERT_EQ(*s->CommitRound(0, {{0, 1, 1}}), 1);
  const std::vector<float> once = ReadAll(*s);
  EXPECT_THAT(once, ElementsAre(0, 0, 0, 0));
  // The coordinator did not hear the answer and commits again.
  ASSERT_EQ(*s->CommitRound(0, {{0, 1, 1}}), 1);
  EXPECT_EQ(ReadAll(*s), once);
  EXPECT_EQ(s->ReadLedger({}, LedgerRead::kOnly)->applied_pushes(), 1);
  // A shard that decides its rounds alone has nothing to commit.
  auto alone = Make(Request(UPDATE_MODE_SYNC, 2));
  const absl::Status not_agreed = alone->CommitRound(0, {{0, 1, 1}}).status();
  EXPECT_EQ(not_agreed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReasonOf(not_agreed), ERROR_REASON_UNSPECIFIED) << not_agreed;
  CreateVariablesRequest async = Request(UPDATE_MODE_ASYNC, 2);
  async.set_rounds_agreed(true);
  EXPECT_THAT(CreateError(async).message(), HasSubstr("rounds_agreed"));
}

TEST_F(ParameterShardTest, AgreedRoundOnAShardWithoutVariablesTakesAnyMembers) {
  CreateVariablesRequest r = Agreed(2);
  r.clear_variables();
  auto s = Make(r);
  ASSERT_EQ(*s->CommitRound(0, {{0, 1, 1}, {1, 4, 2}}), 1);
  EXPECT_EQ(s->version(), 1);
}

TEST_F(ParameterShardTest, AgreedRoundLedgerCountsOnlyCommittedPushesAndSealingDropsStaged) {
  auto s = Make(Agreed(2));
  const std::vector<float> g = {1, 1, 1, 1};
  const GradientRef ref{0, false, {}, g};
  ASSERT_EQ(s->Push({0, 1, 1}, 0, {ref}, FromLease(7, 0)).outcome, PUSH_OUTCOME_AGGREGATED);
  ASSERT_EQ(s->Push({1, 1, 1}, 0, {ref}, FromLease(8, 0)).outcome, PUSH_OUTCOME_AGGREGATED);
  // Staged pushes may never be applied: their records are not trained yet.
  const PushLedger open = *s->ReadLedger({7, 8}, LedgerRead::kOnly);
  EXPECT_EQ(open.applied_pushes(), 0);
  ASSERT_EQ(open.leases_size(), 2);
  EXPECT_EQ(open.leases(0).applied_size(), 0);
  // Worker 0 is lost: the coordinator dropped it from the round and seals
  // its lease; its staged push goes, and a retry is refused.
  const PushLedger sealed = *s->ReadLedger({7}, LedgerRead::kSeal);
  EXPECT_EQ(sealed.leases(0).applied_size(), 0);
  const PushReply retry = s->Push({0, 1, 1}, 0, {ref}, FromLease(7, 0));
  EXPECT_EQ(retry.outcome, PUSH_OUTCOME_REJECTED);
  EXPECT_EQ(ReasonOf(retry.status), ERROR_REASON_LEASE_SEALED) << retry.status;
  EXPECT_EQ(ReasonOf(s->CommitRound(0, {{0, 1, 1}}).status()), ERROR_REASON_ROUND_MEMBER_MISSING);
  ASSERT_EQ(*s->CommitRound(0, {{1, 1, 1}}), 1);
  const PushLedger after = *s->ReadLedger({7, 8}, LedgerRead::kOnly);
  EXPECT_EQ(after.applied_pushes(), 1);
  EXPECT_EQ(after.applied_examples(), 8);
  EXPECT_EQ(after.leases(0).applied_size(), 0);
  ASSERT_EQ(after.leases(1).applied_size(), 1);
  EXPECT_EQ(after.leases(1).applied(0).end(), 8);
}

TEST_F(ParameterShardTest, AgreedRoundSnapshotLeavesOutStagedPushes) {
  auto s = Make(Agreed(2));
  ASSERT_EQ(PushDense(*s, {0, 1, 1}, 0, {2, 2, 2, 2}).outcome, PUSH_OUTCOME_AGGREGATED);
  s->PauseUpdates();
  const ShardCounters c = s->counters();
  // A commit waits while the shard is paused.
  std::thread commit([&] {
    EXPECT_EQ(s->CommitRound(0, {{1, 1, 1}}).status().code(), absl::StatusCode::kDataLoss);
  });
  ASSERT_TRUE(s->RestoreCounters(c).ok());
  EXPECT_EQ(s->counters().version, 0);
  s->ResumeUpdates();
  commit.join();
  EXPECT_EQ(c.version, 0);
  // The restore dropped the staged push: a commit cannot name it, and its
  // retry is staged again.
  EXPECT_EQ(ReasonOf(s->CommitRound(0, {{0, 1, 1}}).status()), ERROR_REASON_ROUND_MEMBER_MISSING);
  EXPECT_EQ(PushDense(*s, {0, 1, 1}, 0, {2, 2, 2, 2}).outcome, PUSH_OUTCOME_AGGREGATED);
  ASSERT_EQ(*s->CommitRound(0, {{0, 1, 1}}), 1);
  EXPECT_THAT(ReadAll(*s), ElementsAre(0, 0, 0, 0));
}

TEST_F(ParameterShardTest, ShutdownRefusesPushesAndEndsWaits) {
  auto s = Make(Request());
  absl::Status waiting;
  s->version_gate().WhenAtLeast(5, absl::InfiniteFuture(),
                                [&](absl::StatusOr<int64_t> v) { waiting = v.status(); });
  s->Shutdown();
  EXPECT_EQ(waiting.code(), absl::StatusCode::kFailedPrecondition);
  const PushReply dropped = PushDense(*s, {0, 1, 1}, 0, {1, 1, 1, 1});
  EXPECT_EQ(dropped.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ReasonOf(dropped.status), ERROR_REASON_JOB_ENDED) << dropped.status;
}

}  // namespace
}  // namespace pstrain
