// The cluster's limits as a user meets them, on real processes: a job over
// a per-job limit is refused by `pstrain validate` and fails as it starts,
// naming the limit and its flag, a full queue's refusal reaches `pstrain submit` clearly (exit code
// 4), a parameter server refuses variables over its own limit and creates nothing, and after every
// refusal the cluster still runs a small job to SUCCEEDED: nothing the refusals touched was
// changed.

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/binary_locator.h"
#include "common/process/child_process.h"
#include "common/status/grpc_status.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "protos/parameter_server.grpc.pb.h"
#include "tests/clicks_job.h"
#include "tests/cluster_fixture.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;
using testing_cluster::TestCluster;

constexpr int kQueueLimit = 100;  // the coordinator's default --max_queued_jobs

// The click-log job with `model` in place of its logistic regression.
std::string ClicksWithModel(const std::string& name, const std::string& model) {
  testing_jobs::ClicksJob job;
  job.name = name;
  job.model_dir = name;
  return absl::StrReplaceAll(job.Text(), {{"model { logistic_regression {} }", model}});
}

struct PstrainRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `pstrain args...` to its end.
PstrainRun Pstrain(const std::vector<std::string>& args) {
  absl::StatusOr<std::string> program = LocateBinary("pstrain", "");
  EXPECT_TRUE(program.ok()) << program.status();
  PstrainRun run;
  if (!program.ok()) return run;
  const std::string log = ::testing::TempDir() + "/pstrain_limits_" + args.front() + ".out";
  std::vector<std::string> shell_args = {"-c", "\"$0\" \"$@\" > " + log + " 2>&1", *program};
  shell_args.insert(shell_args.end(), args.begin(), args.end());
  auto child = ChildProcess::Start({"/bin/sh", shell_args, {}, ""});
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return run;
  absl::StatusOr<ExitStatus> status = (*child)->Wait(absl::Seconds(60));
  EXPECT_TRUE(status.ok()) << status.status();
  if (status.ok()) run.exit_code = status->exit_code;
  std::ifstream in(log);
  run.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

// `spec_text` written to a file named after `name`; its path.
std::string WriteSpec(const std::string& name, const std::string& spec_text) {
  const std::string path = ::testing::TempDir() + "/" + name + ".pbtxt";
  std::ofstream(path) << spec_text;
  return path;
}

// `pstrain submit` of `spec_text`.
PstrainRun SubmitWithCli(TestCluster& cluster, const std::string& name,
                         const std::string& spec_text) {
  return Pstrain({"submit", WriteSpec(name, spec_text),
                  "--coordinator_address=" + cluster.cluster().coordinator().grpc_address});
}

int CountJobs(TestCluster& cluster) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ListJobsRequest request;
  request.set_limit(1000);
  ListJobsResponse response;
  const grpc::Status status = cluster.jobs().ListJobs(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.jobs_size();
}

TEST(LimitsTest, RefusalsAreClearAndChangeNothing) {
  absl::StatusOr<std::unique_ptr<TestCluster>> started = TestCluster::Start("limits", {});
  ASSERT_TRUE(started.ok()) << started.status();
  TestCluster& cluster = **started;

  // Jobs over each per-job limit: `pstrain validate` refuses them naming the
  // limit and its flag, queueing nothing.
  const PstrainRun tables =
      Pstrain({"validate",
               WriteSpec("big-tables", ClicksWithModel("big-tables",
                                                       "model { wide_and_deep { embedding { "
                                                       "max_bytes_per_shard: 42949672960 } } }")),
               "--coordinator_address=" + cluster.cluster().coordinator().grpc_address});
  EXPECT_EQ(tables.exit_code, 2) << tables.output;
  // Two tables of 40 GiB on the one shard: the wide part's weights and the
  // deep part's embedding.
  EXPECT_THAT(tables.output, HasSubstr("the job's embedding tables need 81920 MiB"));
  EXPECT_THAT(tables.output, HasSubstr("allows 32768 MiB (34359738368 bytes) "
                                       "(--max_embedding_mb_per_job)"));
  EXPECT_EQ(CountJobs(cluster), 0);

  // Submitted, they are queued at once and fail as they start, with the
  // same reason, before a parameter server holds a variable of theirs.
  const auto fails_with = [&](const std::string& name, const std::string& model) {
    const absl::StatusOr<std::string> id = cluster.Submit(ClicksWithModel(name, model));
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) return std::string();
    const JobStatus status = cluster.Follow(*id).final_status;
    EXPECT_EQ(status.state(), JOB_STATE_FAILED) << status.ShortDebugString();
    return status.reason();
  };
  EXPECT_THAT(fails_with("big-dense", "model { wide_and_deep { hidden_units: [2000000, 1000] } }"),
              HasSubstr("allows 4096 MiB (4294967296 bytes) (--max_dense_mb_per_job)"));
  const std::vector<std::string> units(5000, "1");
  EXPECT_THAT(fails_with("many-variables", absl::StrCat("model { wide_and_deep { hidden_units: [",
                                                        absl::StrJoin(units, ","), "] } }")),
              HasSubstr("variables; the coordinator allows 10000 (--max_variables_per_job)"));
  EXPECT_EQ(CountJobs(cluster), 2);

  // A parameter server refuses variables over its own limit
  // (--max_variable_mb, by default three quarters of the machine's memory).
  {
    auto ps = ParameterServer::NewStub(grpc::CreateChannel(cluster.cluster().tasks()[1].grpc_address,
                                                           grpc::InsecureChannelCredentials()));
    ASSERT_EQ(cluster.cluster().tasks()[1].role, "ps");
    CreateVariablesRequest request;
    request.set_job_id("huge-1");
    request.set_num_shards(1);
    request.set_num_workers(1);
    VariableSpec* v = request.add_variables();
    v->set_name("w");
    v->set_kind(VARIABLE_KIND_DENSE);
    v->set_dtype(DATA_TYPE_FLOAT32);
    v->mutable_shape()->add_dims(int64_t{1} << 20);
    v->mutable_shape()->add_dims(int64_t{1} << 20);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    CreateVariablesResponse response;
    const absl::Status refused = FromGrpcStatus(ps->CreateVariables(&context, request, &response));
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
    EXPECT_THAT(std::string(refused.message()), HasSubstr("(--max_variable_mb)"));
  }

  // The queue: one job runs (until stopped), kQueueLimit wait, one more is
  // refused.
  testing_jobs::ClicksJob endless;
  endless.name = "endless";
  endless.model_dir = "endless";
  endless.max_steps = 0;
  endless.stop = "max_seconds: 120";  // a bound in case the stop is lost
  absl::StatusOr<std::string> running = cluster.Submit(endless.Text());
  ASSERT_TRUE(running.ok()) << running.status();
  // The refused job took no id.
  EXPECT_EQ(*running, "endless-3");
  // Out of the queue before it fills: the limit counts waiting jobs only.
  const absl::StatusOr<JobStatus> ran = cluster.AwaitStatus(
      *running, [](const JobStatus& status) { return status.state() == JOB_STATE_RUNNING; },
      absl::Seconds(60));
  ASSERT_TRUE(ran.ok()) << ran.status();
  std::vector<std::string> queued;
  testing_jobs::ClicksJob waiting;
  waiting.name = "waiting";
  for (int i = 0; i < kQueueLimit; ++i) {
    waiting.model_dir = absl::StrCat("waiting-", i);
    absl::StatusOr<std::string> id = cluster.Submit(waiting.Text());
    ASSERT_TRUE(id.ok()) << "job " << i << ": " << id.status();
    queued.push_back(*id);
  }
  const PstrainRun full = SubmitWithCli(cluster, "one-too-many", waiting.Text());
  EXPECT_EQ(full.exit_code, 4) << full.output;
  EXPECT_THAT(full.output,
              HasSubstr("pstrain submit: the queue is full: 100 jobs are waiting, the most the "
                        "coordinator allows (--max_queued_jobs)"));
  EXPECT_EQ(CountJobs(cluster), 2 + 1 + kQueueLimit);

  for (const std::string& id : queued) ASSERT_TRUE(cluster.Stop(id).ok()) << id;
  ASSERT_TRUE(cluster.Stop(*running).ok());
  EXPECT_EQ(cluster.Follow(*running).final_status.state(), JOB_STATE_STOPPED);

  // Nothing the refusals touched changed: the cluster runs a job as ever,
  // on the parameter server that refused the huge variables.
  testing_jobs::ClicksJob small;
  small.name = "small";
  small.model_dir = "small";
  absl::StatusOr<std::string> id = cluster.Submit(small.Text());
  ASSERT_TRUE(id.ok()) << id.status();
  const testing_cluster::JobRecord record = cluster.Follow(*id);
  EXPECT_EQ(record.final_status.state(), JOB_STATE_SUCCEEDED)
      << record.final_status.ShortDebugString();
  EXPECT_GE(record.final_status.global_step(), small.max_steps);
}

}  // namespace
}  // namespace pstrain
