#include "tests/cluster_fixture.h"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "bench/common/metrics_page.h"
#include "bench/common/metrics_scrape.h"
#include "common/config/job_spec_parser.h"
#include "common/net/channel_security.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace testing_cluster {
namespace {

std::unique_ptr<grpc::ClientContext> ContextWithDeadline(absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

}  // namespace

std::vector<ProgressEvent> JobRecord::Progress() const {
  std::vector<ProgressEvent> progress;
  for (const JobEvent& event : events) {
    if (event.has_progress()) progress.push_back(event.progress());
  }
  return progress;
}

std::vector<CheckpointInfo> JobRecord::Checkpoints() const {
  std::vector<CheckpointInfo> checkpoints;
  for (const JobEvent& event : events) {
    if (event.has_checkpoint()) checkpoints.push_back(event.checkpoint());
  }
  return checkpoints;
}

std::vector<EvalEvent> JobRecord::Evaluations() const {
  std::vector<EvalEvent> evaluations;
  for (const JobEvent& event : events) {
    if (event.has_eval()) evaluations.push_back(event.eval());
  }
  return evaluations;
}

absl::StatusOr<std::unique_ptr<TestCluster>> TestCluster::Start(const std::string& name,
                                                                LocalClusterOptions options) {
  std::unique_ptr<TestCluster> test(new TestCluster());
  const std::string root = testing::TempDir() + "/" + name;
  ::mkdir(root.c_str(), 0755);
  if (options.run_dir.empty()) {
    // Bazel keeps this folder after the test (test.outputs), so the logs of
    // every process are there to read when a test fails.
    const char* kept = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    options.run_dir = absl::StrCat(kept != nullptr ? kept : root.c_str(), "/", name, "-logs");
  }
  if (options.checkpoint_root.empty()) options.checkpoint_root = root;
  test->checkpoint_root_ = options.checkpoint_root;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  if (!cluster.ok()) return cluster.status();
  test->cluster_ = *std::move(cluster);
  // The cluster's own TLS and client token, if any.
  test->jobs_ = JobService::NewStub(CreateSecureChannel(test->cluster_->coordinator().grpc_address,
                                                        test->cluster_->client_security()));
  return test;
}

ClusterTest::ClusterTest(int num_ps, int num_workers) {
  options_.num_ps = num_ps;
  options_.num_workers = num_workers;
}

void ClusterTest::SetUp() {
  absl::StatusOr<std::unique_ptr<TestCluster>> started =
      TestCluster::Start(testing::UnitTest::GetInstance()->current_test_info()->name(), options_);
  ASSERT_TRUE(started.ok()) << started.status();
  cluster_ = *std::move(started);
}

TestCluster::~TestCluster() {
  absl::Status stopped = cluster_->Stop(absl::Seconds(30));
  EXPECT_TRUE(stopped.ok()) << stopped;
}

absl::StatusOr<std::string> TestCluster::Submit(const std::string& spec_text) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecText(spec_text, "test job");
  if (!spec.ok()) return spec.status();
  SubmitJobRequest request;
  *request.mutable_spec() = *spec;
  SubmitJobResponse response;
  grpc::Status status =
      jobs_->SubmitJob(ContextWithDeadline(absl::Seconds(30)).get(), request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.job_id();
}

JobRecord TestCluster::Follow(const std::string& job_id,
                              const std::function<void(const JobEvent&)>& on_event) {
  JobRecord record;
  const absl::Time give_up = absl::Now() + kJobDeadline;
  grpc::Status status;
  for (;;) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(give_up));
    WatchJobRequest request;
    request.set_job_id(job_id);
    request.set_include_progress(true);
    auto stream = jobs_->WatchJob(&context, request);
    JobEvent event;
    while (stream->Read(&event)) {
      if (on_event) on_event(event);
      record.events.push_back(event);
    }
    status = stream->Finish();
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) break;
    // The coordinator went away (a test may restart it): a new one resumes
    // the job, so watch again once it answers.
    while (absl::Now() < give_up && !Get(job_id).ok()) absl::SleepFor(absl::Milliseconds(200));
    if (absl::Now() >= give_up) break;
  }
  EXPECT_TRUE(status.ok()) << "watching " << job_id << " ended with: " << status.error_message()
                           << "; its status then: "
                           << Get(job_id).value_or(JobStatus()).ShortDebugString();
  if (!status.ok()) {
    // Free the cluster for the next test.
    StopJobRequest stop;
    stop.set_job_id(job_id);
    stop.set_immediately(true);
    StopJobResponse stopped;
    jobs_->StopJob(ContextWithDeadline(absl::Seconds(30)).get(), stop, &stopped);
  }
  // The stream's last status event may precede the final one by a hair.
  absl::StatusOr<JobStatus> final_status = Get(job_id);
  EXPECT_TRUE(final_status.ok()) << final_status.status();
  if (final_status.ok()) record.final_status = *std::move(final_status);
  return record;
}

JobRecord TestCluster::FollowKilling(const std::string& job_id, const std::string& task,
                                     const std::function<bool(const ProgressEvent&)>& kill_now,
                                     absl::Duration down_for, int64_t* killed_at) {
  *killed_at = -1;
  absl::Mutex mu;
  bool killed = false;    // guarded by mu
  bool followed = false;  // guarded by mu
  std::thread restarter([&] {
    {
      absl::MutexLock lock(&mu);
      auto killed_or_followed = [&] { return killed || followed; };
      mu.Await(absl::Condition(&killed_or_followed));
      if (!killed) return;
    }
    absl::SleepFor(down_for);
    absl::Status restarted = RestartTask(task);
    EXPECT_TRUE(restarted.ok()) << "restarting " << task << ": " << restarted;
  });
  bool tried = false;  // only the following thread reads and writes it
  JobRecord record = Follow(job_id, [&](const JobEvent& event) {
    if (tried || !event.has_progress() || !kill_now(event.progress())) return;
    tried = true;
    absl::Status status = KillTask(task);
    EXPECT_TRUE(status.ok()) << "killing " << task << ": " << status;
    if (!status.ok()) return;
    *killed_at = event.progress().global_step();
    absl::MutexLock lock(&mu);
    killed = true;
  });
  {
    absl::MutexLock lock(&mu);
    followed = true;
  }
  restarter.join();
  return record;
}

int64_t TestCluster::AwaitStep(const std::string& job_id, int64_t step,
                               const std::atomic<bool>& ended) {
  const absl::Time give_up = absl::Now() + kJobDeadline;
  while (!ended && absl::Now() < give_up) {
    absl::StatusOr<JobStatus> status = Get(job_id);
    if (status.ok() && status->global_step() >= step) return status->global_step();
    absl::SleepFor(absl::Milliseconds(20));
  }
  return -1;
}

absl::StatusOr<JobStatus> TestCluster::AwaitStatus(
    const std::string& job_id, const std::function<bool(const JobStatus&)>& done,
    absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  absl::StatusOr<JobStatus> status = Get(job_id);
  while (!status.ok() || !done(*status)) {
    if (absl::Now() >= give_up) {
      return absl::DeadlineExceededError(
          absl::StrCat("job ", job_id, " did not get there within ", absl::FormatDuration(timeout),
                       "; its status then: ",
                       status.ok() ? status->ShortDebugString() : status.status().ToString()));
    }
    absl::SleepFor(absl::Milliseconds(50));
    status = Get(job_id);
  }
  return status;
}

absl::Status TestCluster::AwaitMemberState(const std::string& name, MemberState state,
                                           absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  std::string seen = "not a member";
  for (;;) {
    ClusterStatus cluster;
    grpc::Status got = jobs_->GetCluster(ContextWithDeadline(absl::Seconds(30)).get(),
                                         GetClusterRequest(), &cluster);
    if (!got.ok()) seen = absl::StrCat("unknown: ", got.error_message());
    for (const Member& member : cluster.members()) {
      const std::string type(absl::StripPrefix(TaskType_Name(member.task().type()), "TASK_TYPE_"));
      if (absl::StrCat(absl::AsciiStrToLower(type), "/", member.task().index()) != name) continue;
      if (member.state() == state) return absl::OkStatus();
      seen = MemberState_Name(member.state());
    }
    if (absl::Now() >= give_up) {
      return absl::DeadlineExceededError(absl::StrCat(name, " was not ", MemberState_Name(state),
                                                      " within ", absl::FormatDuration(timeout),
                                                      "; it was ", seen));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

absl::StatusOr<double> TestCluster::MetricValue(const std::string& name, const std::string& metric,
                                                const std::map<std::string, std::string>& labels) {
  for (const LocalTask& task : cluster_->tasks()) {
    if (task.name() != name) continue;
    absl::StatusOr<bench::MetricsPage> page = bench::ScrapeMetrics(task, absl::Seconds(10));
    if (!page.ok()) return page.status();
    return page->Sum(metric, labels);
  }
  return absl::NotFoundError(absl::StrCat("no task ", name));
}

absl::StatusOr<JobStatus> TestCluster::Get(const std::string& job_id) {
  GetJobRequest request;
  request.set_job_id(job_id);
  JobStatus status;
  grpc::Status got = jobs_->GetJob(ContextWithDeadline(absl::Seconds(30)).get(), request, &status);
  if (!got.ok()) return FromGrpcStatus(got);
  return status;
}

absl::Status TestCluster::Stop(const std::string& job_id) {
  StopJobRequest request;
  request.set_job_id(job_id);
  StopJobResponse response;
  return FromGrpcStatus(
      jobs_->StopJob(ContextWithDeadline(absl::Seconds(30)).get(), request, &response));
}

absl::Status TestCluster::KillTask(const std::string& name, int signal) {
  // SIGTERM leaves time for the shutdown grace (10 s) and a little more.
  absl::StatusOr<ExitStatus> exit = cluster_->KillTask(name, signal, absl::Seconds(20));
  return exit.status();
}

absl::Status TestCluster::SignalTask(const std::string& name, int signal) {
  for (const LocalTask& task : cluster_->tasks()) {
    if (task.name() != name) continue;
    if (::kill(task.pid, signal) != 0) {
      return absl::InternalError(absl::StrCat("kill(", task.pid, ") of ", name, ": ",
                                              std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("no task ", name, " in the cluster"));
}

absl::Status TestCluster::RestartTask(const std::string& name) {
  return cluster_->RestartTask(name);
}

}  // namespace testing_cluster
}  // namespace pstrain
