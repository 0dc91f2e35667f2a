#include "server/ps/shard_snapshot.h"

#include <dirent.h>

#include <fstream>
#include <sstream>

#include "common/checkpoint/posix_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

class ShardSnapshotTest : public ::testing::Test {
 protected:
  CreateVariablesRequest Request(int shard_index = 0) {
    CreateVariablesRequest r;
    r.set_job_id("job");
    r.set_shard_index(shard_index);
    r.set_num_shards(2);
    r.set_num_workers(2);
    r.mutable_optimizer()->mutable_adam();
    VariableSpec* w = r.add_variables();
    w->set_name("dense/w");
    w->set_kind(VARIABLE_KIND_DENSE);
    w->set_dtype(DATA_TYPE_FLOAT32);
    w->mutable_shape()->add_dims(3);
    w->mutable_shape()->add_dims(5);
    w->mutable_initializer()->set_kind(INITIALIZER_KIND_NORMAL);
    w->mutable_initializer()->set_stddev(1);
    VariableSpec* t = r.add_variables();
    t->set_name("emb");
    t->set_kind(VARIABLE_KIND_EMBEDDING);
    t->set_dtype(DATA_TYPE_FLOAT32);
    t->mutable_shape()->add_dims(0);
    t->mutable_shape()->add_dims(4);
    return r;
  }

  std::unique_ptr<ParameterShard> Make(const CreateVariablesRequest& r) {
    return ParameterShard::Create(r, ShardOptions(), clock_, metrics_).value();
  }

  // Trains `s` a little: dense pushes and rows on this shard.
  void Train(ParameterShard& s) {
    std::vector<int64_t> ids;
    for (int64_t id = 0; ids.size() < 6; ++id) {
      if (RowShardOf(s, id)) ids.push_back(id);
    }
    for (uint64_t seq = 1; seq <= 3; ++seq) {
      std::vector<float> g(15), rows(ids.size() * 4);
      for (size_t i = 0; i < g.size(); ++i) g[i] = 0.1f * (i + seq);
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = 0.01f * (i * seq);
      const std::vector<int64_t> some(ids.begin() + seq - 1, ids.end());
      const std::vector<float> some_rows(rows.begin() + (seq - 1) * 4, rows.end());
      ASSERT_EQ(s.Push({static_cast<int32_t>(seq % 2), 1, seq}, static_cast<int64_t>(seq - 1),
                       {GradientRef{0, false, {}, g}, GradientRef{1, true, some, some_rows}})
                    .outcome,
                PUSH_OUTCOME_APPLIED);
    }
  }

  static bool RowShardOf(const ParameterShard& s, int64_t id) {
    std::vector<float> out(4);
    return s.ReadRows(1, {id}, out.data()).ok();
  }

  // Everything a snapshot should preserve, as bytes.
  static std::string State(ParameterShard& s) {
    std::string out;
    s.variable(0).dense->Visit(
        [&](absl::Span<const float> v, const std::vector<absl::Span<const float>>& slots) {
          out.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
          for (auto sl : slots) out.append(reinterpret_cast<const char*>(sl.data()), sl.size() * 4);
        });
    s.variable(1).table->VisitRows([&](int64_t id, const float* row) {
      out.append(reinterpret_cast<const char*>(&id), 8);
      out.append(reinterpret_cast<const char*>(row), s.variable(1).table->row_bytes());
    });
    s.PauseUpdates();
    const ShardCounters c = s.counters();
    s.ResumeUpdates();
    return out + c.dedup + std::to_string(c.version);
  }

  std::string Path(const std::string& name) { return ::testing::TempDir() + "snap/" + name; }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void Write(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  }

  PosixEnv env_;
  FakeClock clock_;
  prometheus::Registry registry_;
  ShardMetrics metrics_{registry_};
};

TEST_F(ShardSnapshotTest, RoundTripIsBitExactIncludingSlotsAndDedup) {
  auto a = Make(Request());
  Train(*a);
  const absl::StatusOr<SnapshotInfo> info = WriteShardSnapshot(env_, *a, Path("rt/ps-0"), 42);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->version, 3);
  EXPECT_EQ(info->bytes, static_cast<int64_t>(Read(Path("rt/ps-0")).size()));
  // Only the final file is left in the folder.
  DIR* dir = opendir(Path("rt").c_str());
  int files = 0;
  while (dirent* e = readdir(dir)) files += e->d_name[0] != '.';
  closedir(dir);
  EXPECT_EQ(files, 1);

  auto b = Make(Request());
  EXPECT_NE(State(*a), State(*b));
  ShardFileExpectation expect{info->bytes, info->crc32c, true};
  const absl::StatusOr<SnapshotInfo> restored =
      RestoreShardSnapshot(env_, *b, Path("rt/ps-0"), expect);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(State(*a), State(*b));
  EXPECT_EQ(b->version(), 3);
  // The exactly-once state came back: a retried push is a duplicate.
  const std::vector<float> g(15, 1.0f);
  EXPECT_EQ(b->Push({1, 1, 3}, 2, {GradientRef{0, false, {}, g}}).outcome, PUSH_OUTCOME_DUPLICATE);
  // Both shards go on identically.
  EXPECT_EQ(a->Push({1, 1, 5}, 3, {GradientRef{0, false, {}, g}}).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(b->Push({1, 1, 5}, 3, {GradientRef{0, false, {}, g}}).outcome, PUSH_OUTCOME_APPLIED);
  EXPECT_EQ(State(*a), State(*b));
}

TEST_F(ShardSnapshotTest, PushLedgerIsSavedAndRestoredWithTheValues) {
  auto a = Make(Request());
  const std::vector<float> g(15, 1.0f);
  ASSERT_EQ(a->Push({1, 1, 1}, 0, {GradientRef{0, false, {}, g}}, {4, LeaseSlice{9, 2, 0, 4}})
                .outcome,
            PUSH_OUTCOME_APPLIED);
  const absl::StatusOr<SnapshotInfo> info = WriteShardSnapshot(env_, *a, Path("ledger/ps-0"), 1);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->ledger.applied_pushes(), 1);
  ASSERT_EQ(info->ledger.leases_size(), 1);
  EXPECT_EQ(info->ledger.leases(0).applied(0).end(), 4);
  // Pushed after the snapshot: not in it.
  ASSERT_EQ(a->Push({1, 1, 2}, 1, {GradientRef{0, false, {}, g}}, {4, LeaseSlice{9, 2, 4, 8}})
                .outcome,
            PUSH_OUTCOME_APPLIED);

  auto b = Make(Request());
  const absl::StatusOr<SnapshotInfo> restored =
      RestoreShardSnapshot(env_, *b, Path("ledger/ps-0"), {});
  ASSERT_TRUE(restored.ok()) << restored.status();
  const PushLedger ledger = *b->ReadLedger({}, LedgerRead::kOnly);
  EXPECT_EQ(ledger.applied_pushes(), 1);
  EXPECT_EQ(ledger.applied_examples(), 4);
  EXPECT_EQ(ledger.applied_digest(), AppliedPushLedger::PushDigest({1, 1, 1}));
  ASSERT_EQ(ledger.leases_size(), 1);
  EXPECT_EQ(ledger.leases(0).epoch(), 2);
  EXPECT_EQ(ledger.leases(0).applied(0).end(), 4);
}

TEST_F(ShardSnapshotTest, TruncatedAndBitFlippedFilesAreRefusedAndChangeNothing) {
  auto a = Make(Request());
  Train(*a);
  ASSERT_TRUE(WriteShardSnapshot(env_, *a, Path("bad/ps-0"), 1).ok());
  const std::string good = Read(Path("bad/ps-0"));
  auto b = Make(Request());
  const std::string before = State(*b);

  Write(Path("bad/truncated"), good.substr(0, good.size() - 20));
  absl::Status s = RestoreShardSnapshot(env_, *b, Path("bad/truncated"), {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("truncated"));

  // A flipped bit inside the dense variable's values: its record is named.
  std::string flipped = good;
  flipped[good.find("dense/w") + 60] ^= 0x10;
  Write(Path("bad/flipped"), flipped);
  s = RestoreShardSnapshot(env_, *b, Path("bad/flipped"), {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("record 1 (variable \"dense/w\")"));
  EXPECT_THAT(s.message(), HasSubstr("checksum"));

  // A flipped bit in the header.
  flipped = good;
  flipped[20] ^= 1;
  Write(Path("bad/header"), flipped);
  EXPECT_EQ(RestoreShardSnapshot(env_, *b, Path("bad/header"), {}).status().code(),
            absl::StatusCode::kDataLoss);

  // Not what the manifest says.
  EXPECT_EQ(
      RestoreShardSnapshot(env_, *b, Path("bad/ps-0"), {static_cast<int64_t>(good.size()) + 1})
          .status()
          .code(),
      absl::StatusCode::kDataLoss);
  ShardFileExpectation wrong_crc{static_cast<int64_t>(good.size()), 12345, true};
  EXPECT_EQ(RestoreShardSnapshot(env_, *b, Path("bad/ps-0"), wrong_crc).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(RestoreShardSnapshot(env_, *b, Path("bad/none"), {}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(State(*b), before);
}

TEST_F(ShardSnapshotTest, SnapshotOfAnotherLayoutIsRefused) {
  auto a = Make(Request(0));
  ASSERT_TRUE(WriteShardSnapshot(env_, *a, Path("layout/ps-0"), 1).ok());
  auto other_shard = Make(Request(1));
  absl::Status s = RestoreShardSnapshot(env_, *other_shard, Path("layout/ps-0"), {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("shard 0 of 2"));
  CreateVariablesRequest r = Request(0);
  r.mutable_variables(0)->mutable_shape()->set_dims(1, 6);
  auto other_shape = Make(r);
  EXPECT_EQ(RestoreShardSnapshot(env_, *other_shape, Path("layout/ps-0"), {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  r = Request(0);
  r.mutable_optimizer()->mutable_sgd();
  auto other_optimizer = Make(r);
  EXPECT_EQ(RestoreShardSnapshot(env_, *other_optimizer, Path("layout/ps-0"), {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace pstrain
