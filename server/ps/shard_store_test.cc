#include "server/ps/shard_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/clock/fake_clock.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

CreateVariablesRequest Job(const std::string& id) {
  CreateVariablesRequest r;
  r.set_job_id(id);
  r.set_num_shards(1);
  r.set_num_workers(1);
  VariableSpec* v = r.add_variables();
  v->set_name("w");
  v->set_kind(VARIABLE_KIND_DENSE);
  v->set_dtype(DATA_TYPE_FLOAT32);
  v->mutable_shape()->add_dims(4);
  return r;
}

class ShardStoreTest : public ::testing::Test {
 protected:
  ShardStore& Store(const std::string& root) {
    ShardStoreOptions options;
    options.checkpoint_root = root;
    store_ = std::make_unique<ShardStore>(options, clock_, registry_);
    return *store_;
  }
  FakeClock clock_;
  prometheus::Registry registry_;
  std::unique_ptr<ShardStore> store_;
};

TEST_F(ShardStoreTest, OneJobAtATime) {
  ShardStore& store = Store(::testing::TempDir());
  EXPECT_EQ(store.GetJob("a").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.GetJob("").status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(store.CreateVariables(Job("a")).ok());
  EXPECT_TRUE(store.GetJob("a").ok());
  const absl::Status other = store.GetJob("b").status();
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.message(), HasSubstr("job a is"));
  EXPECT_EQ(store.CreateVariables(Job("b")).status().code(), absl::StatusCode::kFailedPrecondition);
  DropJobRequest drop;
  drop.set_job_id("b");
  EXPECT_TRUE(store.DropJob(drop).ok());  // not here: nothing to do
  EXPECT_TRUE(store.GetJob("a").ok());
  drop.set_job_id("a");
  std::shared_ptr<ParameterShard> held = store.GetJob("a").value();
  EXPECT_TRUE(store.DropJob(drop).ok());
  EXPECT_TRUE(store.DropJob(drop).ok());
  // A push that got the job before the drop is refused, not applied.
  const std::vector<float> g(4, 1.0f);
  EXPECT_EQ(held->Push({0, 1, 1}, 0, {GradientRef{0, false, {}, g}}).status.code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(store.CreateVariables(Job("b")).ok());
}

TEST_F(ShardStoreTest, ALateDropLeavesANewerRunOfTheJob) {
  ShardStore& store = Store(::testing::TempDir());
  CreateVariablesRequest run = Job("a");
  run.set_generation(5);
  ASSERT_TRUE(store.CreateVariables(run).ok());
  DropJobRequest drop;
  drop.set_job_id("a");
  drop.set_up_to_generation(4);
  EXPECT_TRUE(store.DropJob(drop).ok());
  EXPECT_TRUE(store.GetJob("a").ok());
  drop.set_up_to_generation(5);
  EXPECT_TRUE(store.DropJob(drop).ok());
  EXPECT_FALSE(store.GetJob("a").ok());
}

TEST_F(ShardStoreTest, ARequestOverTheByteLimitCreatesNothing) {
  ShardStoreOptions options;
  options.shard.max_variable_bytes = 1000;  // 250 floats, no slots (SGD)
  store_ = std::make_unique<ShardStore>(options, clock_, registry_);
  CreateVariablesRequest big = Job("a");
  VariableSpec* v = big.add_variables();
  *v = big.variables(0);
  v->set_name("big");
  v->mutable_shape()->set_dims(0, 300);
  const absl::Status refused = store_->CreateVariables(big).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("(--max_variable_mb)"));
  // Not even the small variable before the big one is there: the job is
  // unknown, and the same job with variables that fit is set up afresh.
  EXPECT_EQ(store_->current_job(), nullptr);
  EXPECT_EQ(store_->GetJob("a").status().code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<CreateVariablesResponse> fits = store_->CreateVariables(Job("a"));
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->variable_bytes(), 16);
}

TEST_F(ShardStoreTest, ANewGenerationReplacesTheRunAndFencesTheOldOne) {
  ShardStore& store = Store(::testing::TempDir());
  CreateVariablesRequest first = Job("a");
  first.set_generation(5);
  ASSERT_TRUE(store.CreateVariables(first).ok());
  std::shared_ptr<ParameterShard> old_run = store.GetJob("a", 5).value();
  EXPECT_TRUE(store.GetJob("a").ok());  // 0: any run
  EXPECT_TRUE(store.CreateVariables(first).ok());  // a retry
  EXPECT_EQ(store.GetJob("a", 5).value(), old_run);

  CreateVariablesRequest older = first;
  older.set_generation(4);
  const absl::Status refused = store.CreateVariables(older).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("generation 4 is older"));

  CreateVariablesRequest second = first;
  second.set_generation(6);
  ASSERT_TRUE(store.CreateVariables(second).ok());
  const absl::Status over = store.GetJob("a", 5).status();
  EXPECT_EQ(over.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(over.message(), HasSubstr("generation 5 of job a is over"));
  EXPECT_NE(store.GetJob("a", 6).value(), old_run);
  // A push of the old run that got its shard before the new run began is
  // refused, not applied to the new run's variables.
  const std::vector<float> g(4, 1.0f);
  EXPECT_EQ(old_run->Push({0, 1, 1}, 0, {GradientRef{0, false, {}, g}}).status.code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ShardStoreTest, CheckpointPathsStayUnderTheRoot) {
  ShardStore& store = Store(::testing::TempDir() + "root/");
  ASSERT_TRUE(store.CreateVariables(Job("a")).ok());
  SnapshotRequest s;
  s.set_job_id("a");
  for (const char* bad : {"", "../x", "a/../../x", "/etc/passwd", "a//b", "./x"}) {
    s.set_path(bad);
    EXPECT_EQ(store.Snapshot(s).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  s.set_path("ckpt-1/ps-0");
  const absl::StatusOr<SnapshotResponse> ok = store.Snapshot(s);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->path(), ::testing::TempDir() + "root/ckpt-1/ps-0");
  s.set_path(ok->path());  // absolute, under the root
  EXPECT_TRUE(store.Snapshot(s).ok());
  RestoreRequest r;
  r.set_job_id("a");
  r.set_path("ckpt-1/ps-0");
  EXPECT_TRUE(store.Restore(r).ok());
  r.set_path("ckpt-9/ps-0");
  EXPECT_EQ(store.Restore(r).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ShardStoreTest, ASymlinkOutOfTheRootIsRefused) {
  const std::string root = ::testing::TempDir() + "/symlinked-root";
  const std::string outside = ::testing::TempDir() + "/outside";
  ASSERT_EQ(::mkdir(root.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(outside.c_str(), 0755), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/escape").c_str()), 0);
  ShardStore& store = Store(root);
  ASSERT_TRUE(store.CreateVariables(Job("a")).ok());
  SnapshotRequest s;
  s.set_job_id("a");
  s.set_path("escape/ckpt-1/ps-0");
  const absl::Status refused = store.Snapshot(s).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("symlink"));
  struct stat info;
  EXPECT_NE(::stat((outside + "/ckpt-1").c_str(), &info), 0) << "written outside the root";
  s.set_path("inside/ckpt-1/ps-0");
  EXPECT_TRUE(store.Snapshot(s).ok());
}

TEST_F(ShardStoreTest, NoRootNoSnapshots) {
  ShardStore& store = Store("");
  ASSERT_TRUE(store.CreateVariables(Job("a")).ok());
  SnapshotRequest s;
  s.set_job_id("a");
  s.set_path("x");
  EXPECT_EQ(store.Snapshot(s).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
