// The coordinator's two gRPC services through an in-process server on
// 127.0.0.1:0, with in-memory fake parameter-server shards and a fake clock
// driving heartbeat deadlines. Every call has a deadline, so a hang fails
// the test instead of stalling it.

#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/manifest.h"
#include "common/checkpoint/posix_env.h"
#include "common/clock/fake_clock.h"
#include "common/net/grpc_server.h"
#include "common/status/grpc_status.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"
#include "protos/coordinator.grpc.pb.h"
#include "server/coordinator/cluster_service.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/job_service.h"
#include "server/coordinator/task_name.h"
#include "server/coordinator/testing/fake_planner.h"
#include "server/coordinator/testing/fake_shard.h"

namespace pstrain {
namespace coordinator {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kCallTimeout = absl::Seconds(30);

std::unique_ptr<grpc::ClientContext> Context(absl::Duration timeout = kCallTimeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

// FakePlanner's plans, each after `delay`, as reading a large data set
// takes; counts them.
class SlowPlanner final : public JobPlanner {
 public:
  absl::StatusOr<JobPlan> Plan(const JobSpec& spec) override {
    absl::SleepFor(delay);
    ++plans;
    return fake_.Plan(spec);
  }
  absl::Duration delay = absl::ZeroDuration();
  std::atomic<int> plans{0};

 private:
  FakePlanner fake_;
};

// One process of the cluster as the test plays it.
struct Caller {
  TaskId task;
  uint64_t incarnation = 0;
};

class CoordinatorServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = JoinPath(::testing::TempDir(),
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    RemoveTree(env_, root_).IgnoreError();
    ASSERT_TRUE(CreateDirs(env_, root_).ok());
    options_.checkpoint_root = root_;
    options_.runner.num_ps = 2;
    options_.runner.num_workers = 2;
    options_.tick = absl::Milliseconds(100);
    options_.shutdown_notice = absl::Seconds(5);
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::ZeroDuration());
    if (coordinator_ != nullptr) coordinator_->Stop();
    server_.reset();
    job_service_.reset();
    cluster_service_.reset();
    coordinator_.reset();
  }

  void StartCoordinator() {
    absl::StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Create(
        clock_, env_, planner_, FakeShardClients({&shards_[0], &shards_[1]}), &metrics_, options_,
        [this](int /*exit_code*/) { shutdown_called_.Notify(); });
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    cluster_service_ = std::make_unique<ClusterServiceImpl>(*coordinator_);
    job_service_ = std::make_unique<JobServiceImpl>(*coordinator_);
    absl::StatusOr<std::unique_ptr<GrpcServer>> server =
        GrpcServer::Start({}, {cluster_service_.get(), job_service_.get()});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    cluster_ = ClusterService::NewStub(channel);
    jobs_ = JobService::NewStub(channel);
    coordinator_->Start();
  }

  // ---- cluster calls

  grpc::Status Register(const Caller& caller, const std::string& address = "") {
    RegisterRequest request;
    *request.mutable_task() = caller.task;
    request.set_incarnation(caller.incarnation);
    request.set_address(address);
    RegisterResponse response;
    return cluster_->Register(Context().get(), request, &response);
  }

  Caller Join(TaskType type, int index, uint64_t incarnation = 1) {
    Caller caller{MakeTask(type, index), incarnation};
    std::string address;
    if (type == TASK_TYPE_PS) address = shards_[index].address();
    grpc::Status status = Register(caller, address);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return caller;
  }

  // ps/0, ps/1, worker/0, worker/1 (and evaluator/0).
  std::vector<Caller> JoinCluster(bool evaluator = false) {
    std::vector<Caller> members = {Join(TASK_TYPE_PS, 0), Join(TASK_TYPE_PS, 1),
                                   Join(TASK_TYPE_WORKER, 0), Join(TASK_TYPE_WORKER, 1)};
    if (evaluator) members.push_back(Join(TASK_TYPE_EVALUATOR, 0));
    return members;
  }

  grpc::Status Heartbeat(const Caller& caller, HeartbeatResponse* response) {
    HeartbeatRequest request;
    *request.mutable_task() = caller.task;
    request.set_incarnation(caller.incarnation);
    return cluster_->Heartbeat(Context().get(), request, response);
  }

  Assignment AwaitAssignment(const Caller& caller, const std::string& known = "",
                             uint64_t known_generation = 0) {
    GetAssignmentRequest request;
    *request.mutable_task() = caller.task;
    request.set_incarnation(caller.incarnation);
    request.set_known_job_id(known);
    request.set_known_generation(known_generation);
    request.set_wait_ms(60000);
    Assignment assignment;
    grpc::Status status = cluster_->GetAssignment(Context().get(), request, &assignment);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return assignment;
  }

  // `caller`'s report of `updates` more applied updates: the shards'
  // answers showed it the job's global step that many updates on.
  grpc::Status Report(Caller& caller, const std::string& job_id, int64_t updates,
                      ProgressResponse* response, double loss = 0.5, uint64_t generation = 0) {
    ProgressReport report;
    report.set_generation(generation);
    *report.mutable_task() = caller.task;
    report.set_incarnation(caller.incarnation);
    report.set_job_id(job_id);
    report.set_steps(updates);
    report.set_parameter_version(Get(job_id).global_step() + updates);
    report.set_examples(updates * 32);
    report.set_seconds(1);
    report.set_loss(loss);
    return cluster_->ReportProgress(Context().get(), report, response);
  }

  ProgressResponse ReportOk(Caller& caller, const std::string& job_id, int64_t updates) {
    ProgressResponse response;
    grpc::Status status = Report(caller, job_id, updates, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  grpc::Status Acquire(const Caller& caller, const std::string& job_id, DataLease* lease) {
    AcquireDataLeaseRequest request;
    *request.mutable_task() = caller.task;
    request.set_incarnation(caller.incarnation);
    request.set_job_id(job_id);
    return cluster_->AcquireDataLease(Context().get(), request, lease);
  }

  grpc::Status ReportEval(const Caller& caller, const std::string& job_id, int64_t step,
                          double loss) {
    EvalReport report;
    *report.mutable_task() = caller.task;
    report.set_incarnation(caller.incarnation);
    report.set_job_id(job_id);
    report.set_checkpoint_step(step);
    (*report.mutable_metrics())["loss"] = loss;
    EvalReportResponse response;
    return cluster_->ReportEval(Context().get(), report, &response);
  }

  // ---- job calls

  std::string Submit(const std::string& text) {
    SubmitJobRequest request;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, request.mutable_spec()));
    SubmitJobResponse response;
    grpc::Status status = jobs_->SubmitJob(Context().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.job_id();
  }

  JobStatus Get(const std::string& job_id) {
    GetJobRequest request;
    request.set_job_id(job_id);
    JobStatus status;
    grpc::Status s = jobs_->GetJob(Context().get(), request, &status);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return status;
  }

  // Watches the job until an event is `wanted`; the stream's deadline
  // fails the test (saying the job never became `what`) if none is.
  // Returns the job's status as the last status event had it.
  JobStatus AwaitEvent(const std::string& job_id, const std::string& what,
                       const std::function<bool(const JobEvent&)>& wanted) {
    WatchJobRequest request;
    request.set_job_id(job_id);
    auto context = Context();
    std::unique_ptr<grpc::ClientReader<JobEvent>> reader = jobs_->WatchJob(context.get(), request);
    JobEvent event;
    JobStatus last;
    while (reader->Read(&event)) {
      if (event.has_status()) last = event.status();
      if (wanted(event)) {
        context->TryCancel();
        reader->Finish().IgnoreError();
        return last;
      }
    }
    grpc::Status status = reader->Finish();
    ADD_FAILURE() << "job " << job_id << " never became " << what << "; last "
                  << JobState_Name(last.state()) << " (" << last.reason()
                  << "); stream: " << status.error_message();
    return last;
  }

  JobStatus AwaitState(const std::string& job_id, JobState state) {
    return AwaitEvent(job_id, JobState_Name(state), [state](const JobEvent& event) {
      return event.has_status() && event.status().state() == state;
    });
  }

  // Waits until the job has saved the checkpoint of `step`.
  void AwaitCheckpoint(const std::string& job_id, int64_t step) {
    AwaitEvent(job_id, absl::StrCat("a job with ckpt-", step), [step](const JobEvent& event) {
      if (event.has_checkpoint()) return event.checkpoint().step() == step;
      for (const CheckpointInfo& info : event.status().checkpoints()) {
        if (info.step() == step) return true;
      }
      return false;
    });
  }

  // A training spec; `extra` is appended (text format).
  static std::string TrainSpec(const std::string& model_dir, const std::string& extra = "") {
    return absl::StrCat(R"pb(
                          name: "t"
                          mode: JOB_MODE_TRAIN
                          model { logistic_regression {} }
                          train_data { synthetic_clicks { num_examples: 10000 } }
                          stop { max_steps: 100000 }
                          checkpoint { model_dir: ")pb",
                        model_dir, R"pb(" every_steps: 100 }
                        )pb",
                        extra);
  }

  // The value of an unlabelled counter of registry_; -1 when absent.
  double CounterValue(const std::string& name) {
    for (const prometheus::MetricFamily& family : registry_.Collect()) {
      if (family.name == name && family.metric.size() == 1) return family.metric[0].counter.value;
    }
    return -1;
  }

  std::string root_;
  PosixEnv env_;
  FakeClock clock_;
  SlowPlanner planner_;
  // pstrain_coordinator_data_leases_requeued_total.
  double LeasesRequeued() {
    for (const prometheus::MetricFamily& family : registry_.Collect()) {
      if (family.name == "pstrain_coordinator_data_leases_requeued_total" &&
          !family.metric.empty()) {
        return family.metric[0].counter.value;
      }
    }
    return 0;
  }

  prometheus::Registry registry_;
  CoordinatorMetrics metrics_{registry_};
  FakeShard shards_[2] = {FakeShard(env_, "ps-0.test:2222"), FakeShard(env_, "ps-1.test:2222")};
  CoordinatorOptions options_;
  absl::Notification shutdown_called_;

  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<ClusterServiceImpl> cluster_service_;
  std::unique_ptr<JobServiceImpl> job_service_;
  std::unique_ptr<GrpcServer> server_;
  std::unique_ptr<ClusterService::Stub> cluster_;
  std::unique_ptr<JobService::Stub> jobs_;
};

TEST_F(CoordinatorServiceTest, RegistrationFencesStaleIncarnations) {
  StartCoordinator();
  Caller old_worker{MakeTask(TASK_TYPE_WORKER, 0), 7};
  ASSERT_TRUE(Register(old_worker).ok());
  HeartbeatResponse beat;
  EXPECT_TRUE(Heartbeat(old_worker, &beat).ok());

  Caller new_worker{MakeTask(TASK_TYPE_WORKER, 0), 8};  // the process restarted
  ASSERT_TRUE(Register(new_worker).ok());
  EXPECT_EQ(Heartbeat(old_worker, &beat).error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(Register(old_worker).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(Heartbeat(new_worker, &beat).ok());

  DataLease lease;
  EXPECT_EQ(Acquire(old_worker, "any", &lease).error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(Acquire(Caller{MakeTask(TASK_TYPE_WORKER, 5), 1}, "any", &lease).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Register(Caller{MakeTask(TASK_TYPE_CHIEF, 0), 1}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Register(Caller{MakeTask(TASK_TYPE_WORKER, 1), 0}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  // A parameter server must say where workers reach it.
  EXPECT_EQ(Register(Caller{MakeTask(TASK_TYPE_PS, 0), 1}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  // A job that is not running: the worker should stop.
  EXPECT_EQ(Acquire(new_worker, "nope-1", &lease).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  ClusterStatus cluster;
  ASSERT_TRUE(jobs_->GetCluster(Context().get(), GetClusterRequest(), &cluster).ok());
  ASSERT_EQ(cluster.members_size(), 1);
  EXPECT_EQ(cluster.members(0).incarnation(), 8u);
  EXPECT_EQ(cluster.members(0).state(), MEMBER_STATE_IDLE);
}

TEST_F(CoordinatorServiceTest, ATaskIndexBeyondTheDefaultBoundRegistersInALargeCluster) {
  options_.runner.num_workers = 5000;
  StartCoordinator();
  EXPECT_TRUE(Register(Caller{MakeTask(TASK_TYPE_WORKER, 4096), 1}).ok());
  EXPECT_TRUE(Register(Caller{MakeTask(TASK_TYPE_WORKER, 4999), 1}).ok());
  const grpc::Status beyond = Register(Caller{MakeTask(TASK_TYPE_WORKER, 5000), 1});
  EXPECT_EQ(beyond.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(beyond.error_message().find("[0, 5000)"), std::string::npos) << beyond.error_message();
}

TEST_F(CoordinatorServiceTest, TaskIndicesStayBoundedInASmallCluster) {
  StartCoordinator();  // two workers
  EXPECT_TRUE(Register(Caller{MakeTask(TASK_TYPE_WORKER, 4095), 1}).ok());
  EXPECT_EQ(Register(Caller{MakeTask(TASK_TYPE_WORKER, 4096), 1}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(CoordinatorServiceTest, HeartbeatsShowStepHealthAndQueueDepthInTheCluster) {
  StartCoordinator();
  Caller worker{MakeTask(TASK_TYPE_WORKER, 0), 3};
  ASSERT_TRUE(Register(worker).ok());
  HeartbeatRequest request;
  *request.mutable_task() = worker.task;
  request.set_incarnation(worker.incarnation);
  request.set_step(1200);
  request.set_health(MEMBER_HEALTH_DEGRADED);
  request.set_health_detail("the coordinator (progress report): connection refused");
  request.set_queue_depth(2);
  HeartbeatResponse beat;
  ASSERT_TRUE(cluster_->Heartbeat(Context().get(), request, &beat).ok());

  ClusterStatus cluster;
  ASSERT_TRUE(jobs_->GetCluster(Context().get(), GetClusterRequest(), &cluster).ok());
  ASSERT_EQ(cluster.members_size(), 1);
  const Member& member = cluster.members(0);
  EXPECT_EQ(member.step(), 1200);
  EXPECT_EQ(member.health(), MEMBER_HEALTH_DEGRADED);
  EXPECT_EQ(member.health_detail(), "the coordinator (progress report): connection refused");
  EXPECT_EQ(member.queue_depth(), 2);

  // The next heartbeat replaces what the last one said.
  request.set_step(1300);
  request.set_health(MEMBER_HEALTH_OK);
  request.clear_health_detail();
  request.set_queue_depth(0);
  ASSERT_TRUE(cluster_->Heartbeat(Context().get(), request, &beat).ok());
  ASSERT_TRUE(jobs_->GetCluster(Context().get(), GetClusterRequest(), &cluster).ok());
  EXPECT_EQ(cluster.members(0).step(), 1300);
  EXPECT_EQ(cluster.members(0).health(), MEMBER_HEALTH_OK);
  EXPECT_EQ(cluster.members(0).health_detail(), "");
  EXPECT_EQ(cluster.members(0).queue_depth(), 0);
}

TEST_F(CoordinatorServiceTest, SubmitValidatesAndConfinesPaths) {
  StartCoordinator();
  SubmitJobRequest request;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(TrainSpec("m"), request.mutable_spec()));
  request.set_validate_only(true);
  SubmitJobResponse response;
  ASSERT_TRUE(jobs_->SubmitJob(Context().get(), request, &response).ok());
  EXPECT_TRUE(response.job_id().empty());
  EXPECT_EQ(response.status().spec().checkpoint().model_dir(), root_ + "/m");
  EXPECT_EQ(response.status().spec().optimizer().learning_rate(), 0.01f);  // a default
  ListJobsResponse list;
  ASSERT_TRUE(jobs_->ListJobs(Context().get(), ListJobsRequest(), &list).ok());
  EXPECT_EQ(list.jobs_size(), 0);

  request.mutable_spec()->mutable_checkpoint()->set_model_dir("/elsewhere/m");
  request.set_validate_only(false);
  grpc::Status status = jobs_->SubmitJob(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("checkpoint.model_dir"), std::string::npos)
      << status.error_message();

  request.mutable_spec()->mutable_checkpoint()->set_model_dir("m");
  request.mutable_spec()->mutable_optimizer()->set_learning_rate(-1);
  status = jobs_->SubmitJob(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("learning_rate"), std::string::npos)
      << status.error_message();

  GetJobRequest get;
  get.set_job_id("nope-1");
  JobStatus job;
  EXPECT_EQ(jobs_->GetJob(Context().get(), get, &job).error_code(), grpc::StatusCode::NOT_FOUND);
}

// A submit answers before the job reads its data (its first phase), and a
// submit sent again with its request id, as a client does when the answer
// did not come in time, finds the job instead of queueing another.
TEST_F(CoordinatorServiceTest, SubmitAnswersAtOnceAndARetryFindsItsJob) {
  planner_.delay = absl::Seconds(3);
  StartCoordinator();
  JoinCluster();
  SubmitJobRequest request;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(TrainSpec("m"), request.mutable_spec()));
  request.set_request_id("b8d0c7e4-first");
  SubmitJobResponse response;
  // Well within the time the job's data takes to read.
  grpc::Status status = jobs_->SubmitJob(Context(absl::Seconds(1)).get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.job_id(), "t-1");
  EXPECT_FALSE(response.already_submitted());
  EXPECT_EQ(response.status().request_id(), "b8d0c7e4-first");

  SubmitJobResponse again;
  status = jobs_->SubmitJob(Context(absl::Seconds(1)).get(), request, &again);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(again.job_id(), "t-1");
  EXPECT_TRUE(again.already_submitted());
  ListJobsResponse list;
  ASSERT_TRUE(jobs_->ListJobs(Context().get(), ListJobsRequest(), &list).ok());
  EXPECT_EQ(list.jobs_size(), 1);

  // The same id for another job is a mistake, said as such.
  request.mutable_spec()->mutable_stop()->set_max_steps(5);
  status = jobs_->SubmitJob(Context().get(), request, &again);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(status.error_message(), HasSubstr("queued job t-1 with another spec"));
  request.set_request_id("two words");
  status = jobs_->SubmitJob(Context().get(), request, &again);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("request_id"));

  // Without an id, each submit is a job of its own.
  request.clear_request_id();
  for (const char* expected : {"t-2", "t-3"}) {
    status = jobs_->SubmitJob(Context().get(), request, &again);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(again.job_id(), expected);
  }
  // The first job plans once it starts, after its submit was answered.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (planner_.plans.load() == 0 && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(50));
  EXPECT_GE(planner_.plans.load(), 1);
}

// Data files that are not there are refused at submit; a dry run plans the
// job as its start would, reading the data.
TEST_F(CoordinatorServiceTest, SubmitRefusesMissingDataFilesAndADryRunPlans) {
  StartCoordinator();
  SubmitJobRequest request;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(TrainSpec("m"), request.mutable_spec()));
  request.mutable_spec()->mutable_train_data()->mutable_csv()->set_path(root_ + "/missing-*.csv");
  SubmitJobResponse response;
  grpc::Status status = jobs_->SubmitJob(Context().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("train_data: "));
  EXPECT_THAT(status.error_message(), HasSubstr("missing-*.csv"));
  ListJobsResponse list;
  ASSERT_TRUE(jobs_->ListJobs(Context().get(), ListJobsRequest(), &list).ok());
  EXPECT_EQ(list.jobs_size(), 0);

  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(TrainSpec("m"), request.mutable_spec()));
  request.set_validate_only(true);
  status = jobs_->SubmitJob(Context().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(planner_.plans.load(), 1);
  EXPECT_TRUE(response.job_id().empty());
}

TEST_F(CoordinatorServiceTest, SubmitRefusesPathsThatLeaveTheRootThroughASymlink) {
  StartCoordinator();
  const std::string outside = root_ + "-outside";
  RemoveTree(env_, outside).IgnoreError();
  ASSERT_TRUE(CreateDirs(env_, outside + "/ckpt-100").ok());
  ASSERT_TRUE(CreateDirs(env_, root_ + "/inside").ok());
  ASSERT_EQ(::symlink(outside.c_str(), (root_ + "/escape").c_str()), 0);
  ASSERT_EQ(::symlink((root_ + "/inside").c_str(), (root_ + "/alias").c_str()), 0);
  ASSERT_EQ(::symlink((root_ + "/nothing").c_str(), (root_ + "/dangling").c_str()), 0);
  SubmitJobRequest request;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(TrainSpec("m"), request.mutable_spec()));
  request.set_validate_only(true);
  SubmitJobResponse response;

  // A link that stays under the root is fine.
  request.mutable_spec()->mutable_checkpoint()->set_model_dir("alias/m");
  grpc::Status status = jobs_->SubmitJob(Context().get(), request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();

  struct Case {
    std::string field;
    std::function<void(JobSpec&)> set;
  };
  const std::vector<Case> cases = {
      {"checkpoint.model_dir",
       [&](JobSpec& spec) { spec.mutable_checkpoint()->set_model_dir("escape/m"); }},
      {"checkpoint.model_dir",
       [&](JobSpec& spec) { spec.mutable_checkpoint()->set_model_dir(root_ + "/escape"); }},
      {"checkpoint.model_dir",
       [&](JobSpec& spec) { spec.mutable_checkpoint()->set_model_dir("dangling/m"); }},
      {"checkpoint.warm_start_from",
       [&](JobSpec& spec) { spec.mutable_checkpoint()->set_warm_start_from("escape/ckpt-100"); }},
      {"export.export_dir",
       [&](JobSpec& spec) { spec.mutable_export_()->set_export_dir("escape/export"); }},
  };
  for (const Case& c : cases) {
    SubmitJobRequest bad = request;
    bad.mutable_spec()->mutable_checkpoint()->set_model_dir("m");
    c.set(*bad.mutable_spec());
    status = jobs_->SubmitJob(Context().get(), bad, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << bad.spec().ShortDebugString();
    EXPECT_NE(status.error_message().find(c.field), std::string::npos) << status.error_message();
    EXPECT_NE(status.error_message().find("symlink"), std::string::npos) << status.error_message();
  }
  ListJobsResponse list;
  ASSERT_TRUE(jobs_->ListJobs(Context().get(), ListJobsRequest(), &list).ok());
  EXPECT_EQ(list.jobs_size(), 0);
}

TEST_F(CoordinatorServiceTest, AJobSaysWhichMembersItWaitsFor) {
  StartCoordinator();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_WORKER, 0);
  const std::string job_id = Submit(TrainSpec("m"));
  JobStatus status = AwaitEvent(job_id, "waiting for members", [](const JobEvent& event) {
    return event.status().reason().find("waiting for") != std::string::npos;
  });
  EXPECT_EQ(status.state(), JOB_STATE_RUNNING);
  EXPECT_NE(status.reason().find("waiting for ps/1, worker/1 since"), std::string::npos)
      << status.reason();

  // The missing ones arrive: the job starts.
  Caller ps1 = Join(TASK_TYPE_PS, 1);
  Caller worker1 = Join(TASK_TYPE_WORKER, 1);
  Assignment assignment = AwaitAssignment(worker1);
  EXPECT_EQ(assignment.job_id(), job_id);
  EXPECT_EQ(assignment.worker_rank(), 1);
  EXPECT_EQ(assignment.num_workers(), 2);
  EXPECT_EQ(Get(job_id).reason(), "");
}

TEST_F(CoordinatorServiceTest, StoppedJobSavesAFinalCheckpointAndFreesTheCluster) {
  StartCoordinator();
  std::vector<Caller> members = JoinCluster();
  Caller& worker0 = members[2];
  Caller& worker1 = members[3];
  const std::string job_id = Submit(TrainSpec("m"));

  Assignment assignment = AwaitAssignment(worker0);
  ASSERT_EQ(assignment.job_id(), job_id);
  ASSERT_EQ(assignment.ps_addresses_size(), 2);
  EXPECT_EQ(assignment.ps_addresses(0), shards_[0].address());
  ASSERT_EQ(assignment.placements_size(), 3);
  EXPECT_EQ(assignment.placements(2).name(), "emb");
  EXPECT_EQ(assignment.placements(2).shard_index(), -1);
  for (int i = 0; i < 2; ++i) {
    std::vector<CreateVariablesRequest> created = shards_[i].created();
    ASSERT_EQ(created.size(), 1u);
    EXPECT_EQ(created[0].shard_index(), i);
    EXPECT_EQ(created[0].num_shards(), 2);
    EXPECT_EQ(created[0].num_workers(), 2);
  }

  DataLease lease;
  ASSERT_TRUE(Acquire(worker0, job_id, &lease).ok());
  // The automatic size: a quarter of each worker's 5000 records.
  EXPECT_EQ(lease.range().end() - lease.range().begin(), 1250);
  EXPECT_EQ(ReportOk(worker0, job_id, 60).global_step(), 60);
  ProgressResponse progress = ReportOk(worker1, job_id, 60);
  EXPECT_EQ(progress.global_step(), 120);
  EXPECT_FALSE(progress.stop());

  StopJobRequest stop;
  stop.set_job_id(job_id);
  StopJobResponse stopped;
  ASSERT_TRUE(jobs_->StopJob(Context().get(), stop, &stopped).ok());
  EXPECT_EQ(stopped.status().state(), JOB_STATE_FINISHING);
  // Workers hear the stop in their next report; then the final checkpoint.
  progress = ReportOk(worker0, job_id, 5);
  EXPECT_TRUE(progress.stop());
  EXPECT_EQ(progress.stop_reason(), STOP_REASON_USER);
  EXPECT_TRUE(ReportOk(worker1, job_id, 5).stop());
  EXPECT_TRUE(Acquire(worker0, job_id, &lease).ok());
  EXPECT_TRUE(lease.end_of_data());

  JobStatus status = AwaitState(job_id, JOB_STATE_STOPPED);
  EXPECT_EQ(status.stop_reason(), STOP_REASON_USER);
  EXPECT_EQ(status.global_step(), 130);
  EXPECT_NE(status.reason().find("resume from ckpt-130"), std::string::npos) << status.reason();
  ASSERT_GE(status.checkpoints_size(), 1);
  EXPECT_EQ(status.checkpoints(status.checkpoints_size() - 1).step(), 130);
  EXPECT_TRUE(status.checkpoints(status.checkpoints_size() - 1).final());
  absl::StatusOr<CheckpointManifest> manifest = ReadManifest(env_, root_ + "/m/ckpt-130");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_TRUE(manifest->final());
  EXPECT_EQ(manifest->shards_size(), 2);
  EXPECT_EQ(manifest->data_position().num_records(), 10000);

  // Dropped from the shards, every member idle, no assignment.
  for (int i = 0; i < 2; ++i) EXPECT_EQ(shards_[i].dropped(), std::vector<std::string>{job_id});
  HeartbeatResponse beat;
  ASSERT_TRUE(Heartbeat(worker0, &beat).ok());
  EXPECT_EQ(beat.job_id(), "");
  EXPECT_EQ(AwaitAssignment(worker0, job_id).job_id(), "");
  ClusterStatus cluster;
  ASSERT_TRUE(jobs_->GetCluster(Context().get(), GetClusterRequest(), &cluster).ok());
  EXPECT_EQ(cluster.running_job_id(), "");
  for (const Member& member : cluster.members()) {
    EXPECT_EQ(member.state(), MEMBER_STATE_IDLE) << TaskName(member.task());
  }
  // The job has ended: its workers are told to stop.
  ProgressResponse late;
  EXPECT_EQ(Report(worker0, job_id, 1, &late).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(CoordinatorServiceTest, MaxStepsEndsAJobAfterItsFinalCheckpointIsEvaluated) {
  StartCoordinator();
  std::vector<Caller> members = JoinCluster(/*evaluator=*/true);
  Caller& worker0 = members[2];
  Caller& worker1 = members[3];
  Caller& evaluator = members[4];
  const std::string job_id = Submit(R"pb(
    name: "e"
    mode: JOB_MODE_TRAIN_AND_EVAL
    model { logistic_regression {} }
    train_data { synthetic_clicks { num_examples: 10000 } }
    eval_data { synthetic_clicks { num_examples: 1000 } }
    stop { max_steps: 300 }
    checkpoint { model_dir: "e" every_steps: 100 max_to_keep: 1 }
  )pb");
  ASSERT_EQ(AwaitAssignment(evaluator).job_id(), job_id);

  WatchCheckpointsRequest watch;
  *watch.mutable_task() = evaluator.task;
  watch.set_incarnation(evaluator.incarnation);
  watch.set_job_id(job_id);
  auto watch_context = Context();
  std::unique_ptr<grpc::ClientReader<CheckpointNotification>> checkpoints =
      cluster_->WatchCheckpoints(watch_context.get(), watch);

  EXPECT_FALSE(ReportOk(worker0, job_id, 150).stop());  // step 150: ckpt-150 is due
  CheckpointNotification notification;
  ASSERT_TRUE(checkpoints->Read(&notification));
  EXPECT_EQ(notification.job_id(), job_id);
  EXPECT_EQ(notification.checkpoint().step(), 150);
  EXPECT_FALSE(notification.checkpoint().final());

  ProgressResponse progress = ReportOk(worker1, job_id, 200);  // step 350 >= max_steps
  EXPECT_TRUE(progress.stop());
  EXPECT_EQ(progress.stop_reason(), STOP_REASON_MAX_STEPS);
  EXPECT_TRUE(ReportOk(worker0, job_id, 0).stop());

  // The final checkpoint is announced; ckpt-150 is kept (the evaluator
  // holds it) although max_to_keep is 1.
  ASSERT_TRUE(checkpoints->Read(&notification));
  EXPECT_EQ(notification.checkpoint().step(), 350);
  EXPECT_TRUE(notification.checkpoint().final());
  EXPECT_TRUE(PathExists(env_, root_ + "/e/ckpt-150").value_or(false));
  EXPECT_EQ(Get(job_id).state(), JOB_STATE_FINISHING);

  ASSERT_TRUE(ReportEval(evaluator, job_id, 150, 0.7).ok());
  ReleaseCheckpointRequest release;
  *release.mutable_task() = evaluator.task;
  release.set_incarnation(evaluator.incarnation);
  release.set_job_id(job_id);
  release.set_step(150);
  ReleaseCheckpointResponse released;
  ASSERT_TRUE(cluster_->ReleaseCheckpoint(Context().get(), release, &released).ok());
  ASSERT_TRUE(ReportEval(evaluator, job_id, 350, 0.5).ok());

  JobStatus status = AwaitState(job_id, JOB_STATE_SUCCEEDED);
  EXPECT_EQ(status.stop_reason(), STOP_REASON_MAX_STEPS);
  EXPECT_EQ(status.last_eval_step(), 350);
  EXPECT_EQ(status.best_checkpoint_step(), 350);
  EXPECT_EQ(status.last_eval_metrics().at("loss"), 0.5);
  // The stream ends with the job.
  EXPECT_FALSE(checkpoints->Read(&notification));
  EXPECT_TRUE(checkpoints->Finish().ok());
  // Released and past max_to_keep: deleted before the job ended.
  EXPECT_FALSE(PathExists(env_, root_ + "/e/ckpt-150").value_or(true));
  ASSERT_EQ(status.checkpoints_size(), 1);
  EXPECT_EQ(status.checkpoints(0).metrics().at("loss"), 0.5);
}

TEST_F(CoordinatorServiceTest, ALostWorkersLeaseGoesBackToTheQueue) {
  StartCoordinator();
  std::vector<Caller> members = JoinCluster();
  Caller& worker0 = members[2];
  Caller& worker1 = members[3];
  const std::string job_id = Submit(TrainSpec("m"));
  ASSERT_EQ(AwaitAssignment(worker0).job_id(), job_id);

  DataLease first, second;
  ASSERT_TRUE(Acquire(worker0, job_id, &first).ok());
  ASSERT_TRUE(Acquire(worker1, job_id, &second).ok());
  EXPECT_NE(first.range().begin(), second.range().begin());

  // worker/0 goes silent; the others keep sending heartbeats, every
  // interval (a coordinator that hears nobody for two intervals holds
  // back, taking itself for the one cut off).
  HeartbeatResponse beat;
  for (int i = 0; i < 6; ++i) {
    clock_.Advance(absl::Seconds(2));
    for (const Caller& member : {members[0], members[1], worker1}) {
      ASSERT_TRUE(Heartbeat(member, &beat).ok());
    }
  }
  // The ticker finds worker/0 lost and asks the shards what of its lease
  // was trained.
  for (FakeShard& shard : shards_) ASSERT_TRUE(shard.WaitForLedgerReads(1, kCallTimeout));
  ClusterStatus cluster;
  ASSERT_TRUE(jobs_->GetCluster(Context().get(), GetClusterRequest(), &cluster).ok());
  ASSERT_EQ(cluster.members(2).state(), MEMBER_STATE_LOST);
  EXPECT_EQ(Heartbeat(worker0, &beat).error_code(), grpc::StatusCode::ABORTED);
  // The lease goes back once the shards said what of it was trained
  // (nothing: no push reached them). Only the metric tells when; nothing
  // offers a wait for it.
  for (absl::Time give_up = absl::Now() + kCallTimeout;
       absl::Now() < give_up && LeasesRequeued() < 1;) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(LeasesRequeued(), 1);
  for (FakeShard& shard : shards_) {
    ASSERT_EQ(shard.ledger_reads().size(), 1u);
    EXPECT_TRUE(shard.ledger_reads()[0].seal());
  }

  // Its range is handed out again, first.
  DataLease again;
  ASSERT_TRUE(Acquire(worker1, job_id, &again).ok());
  EXPECT_EQ(again.range().begin(), first.range().begin());
  EXPECT_EQ(again.range().end(), first.range().end());
  // The job goes on.
  EXPECT_EQ(Get(job_id).state(), JOB_STATE_RUNNING);
}

TEST_F(CoordinatorServiceTest, ALostParameterServerCostsARollbackToTheNewestCheckpoint) {
  StartCoordinator();
  std::vector<Caller> members = JoinCluster();
  Caller& worker0 = members[2];
  const std::string job_id = Submit(TrainSpec("m"));
  const Assignment first = AwaitAssignment(worker0);
  ASSERT_EQ(first.job_id(), job_id);
  ASSERT_GT(first.generation(), 0u);
  ReportOk(worker0, job_id, 100);  // ckpt-100 is due
  AwaitCheckpoint(job_id, 100);
  ASSERT_EQ(Get(job_id).checkpoints_size(), 1);
  EXPECT_EQ(ReportOk(worker0, job_id, 30).global_step(), 130);

  // ps/1's process restarts (empty): training pauses, every shard starts a
  // new generation from ckpt-100, and workers get new assignments.
  const size_t created_before = shards_[0].created().size();
  Join(TASK_TYPE_PS, 1, /*incarnation=*/2);
  const Assignment second = AwaitAssignment(worker0, job_id, first.generation());
  EXPECT_EQ(second.job_id(), job_id);
  EXPECT_GT(second.generation(), first.generation());
  EXPECT_EQ(second.global_step(), 100);
  EXPECT_THAT(second.restore_checkpoint(), HasSubstr("ckpt-100"));
  for (FakeShard& shard : shards_) {
    ASSERT_FALSE(shard.created().empty());
    EXPECT_EQ(shard.created().back().generation(), second.generation());
    ASSERT_FALSE(shard.restored().empty());
    EXPECT_THAT(shard.restored().back().path(), HasSubstr("ckpt-100"));
  }
  EXPECT_EQ(shards_[0].created().size(), created_before + 1);
  JobStatus status = Get(job_id);
  EXPECT_EQ(status.state(), JOB_STATE_RUNNING);
  EXPECT_EQ(status.global_step(), 100);
  EXPECT_EQ(status.rollbacks(), 1);
  EXPECT_THAT(status.last_rollback(), HasSubstr("ps/1"));
  EXPECT_THAT(status.last_rollback(), HasSubstr("rolled back from step 130 to ckpt-100"));
  EXPECT_EQ(CounterValue("pstrain_coordinator_rollbacks_total"), 1);
  EXPECT_EQ(CounterValue("pstrain_coordinator_rolled_back_steps_total"), 30);

  // Work of the old generation is void; the new one's counts from 100.
  ProgressResponse response;
  EXPECT_EQ(Report(worker0, job_id, 30, &response, 0.5, first.generation()).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(Report(worker0, job_id, 30, &response, 0.5, second.generation()).ok());
  EXPECT_EQ(response.global_step(), 130);
}

TEST_F(CoordinatorServiceTest, SyncWithBackupWorkersOnSeveralShardsTrainsInAgreedRounds) {
  StartCoordinator();
  std::vector<Caller> members = JoinCluster();  // 2 parameter servers, 2 workers
  const std::string job_id = Submit(
      TrainSpec("m", "training { update_mode: UPDATE_MODE_SYNC replicas_to_aggregate: 1 }"));
  const Assignment assignment = AwaitAssignment(members[2]);
  ASSERT_EQ(assignment.job_id(), job_id);
  // The shards stage pushes for the coordinator to commit.
  for (FakeShard& shard : shards_) {
    ASSERT_EQ(shard.created().size(), 1u);
    EXPECT_TRUE(shard.created()[0].rounds_agreed());
  }
  auto join = [&](const Caller& worker, uint64_t push_incarnation, JoinRoundResponse* response) {
    JoinRoundRequest request;
    *request.mutable_task() = worker.task;
    request.set_incarnation(worker.incarnation);
    request.set_job_id(job_id);
    request.set_generation(assignment.generation());
    request.set_round(0);
    request.set_push_incarnation(push_incarnation);
    request.set_push_sequence(1);
    return cluster_->JoinRound(Context().get(), request, response);
  };
  // One gradient a round: worker/1's is the round, on both shards.
  JoinRoundResponse first;
  ASSERT_TRUE(join(members[3], 11, &first).ok());
  EXPECT_EQ(first.outcome(), ROUND_JOIN_MEMBER);
  EXPECT_EQ(first.global_step(), 1);
  for (FakeShard& shard : shards_) {
    ASSERT_EQ(shard.commits().size(), 1u);
    ASSERT_EQ(shard.commits()[0].members_size(), 1);
    EXPECT_EQ(shard.commits()[0].members(0).worker(), 1);
    EXPECT_EQ(shard.commits()[0].members(0).incarnation(), 11u);
  }
  JoinRoundResponse second;
  ASSERT_TRUE(join(members[2], 10, &second).ok());
  EXPECT_EQ(second.outcome(), ROUND_JOIN_LATE);
  EXPECT_EQ(second.global_step(), 1);
}

TEST_F(CoordinatorServiceTest, AParameterServerThatNeverComesBackFailsTheJobWithAReason) {
  StartCoordinator();
  std::vector<Caller> members = JoinCluster();
  const std::string job_id = Submit(TrainSpec("m"));
  ASSERT_EQ(AwaitAssignment(members[2]).job_id(), job_id);
  JobStatus status;
  absl::Notification failed;
  std::thread watcher([&] {
    status = AwaitState(job_id, JOB_STATE_FAILED);
    failed.Notify();
  });
  // ps/1 falls silent; the others keep beating while the job waits for it.
  HeartbeatResponse beat;
  while (!failed.WaitForNotificationWithTimeout(absl::Milliseconds(5))) {
    clock_.Advance(absl::Seconds(2));
    for (int m : {0, 2, 3}) Heartbeat(members[m], &beat);
  }
  watcher.join();
  EXPECT_THAT(status.reason(), HasSubstr("ps/1"));
  EXPECT_THAT(status.reason(), HasSubstr("no heartbeat"));
  EXPECT_THAT(status.reason(), HasSubstr("to come back"));
}

TEST_F(CoordinatorServiceTest, ASecondJobResumesFromTheFirstJobsCheckpoint) {
  StartCoordinator();
  std::vector<Caller> members = JoinCluster();
  Caller& worker0 = members[2];
  Caller& worker1 = members[3];
  const std::string first = Submit(TrainSpec("shared"));
  const std::string second = Submit(TrainSpec("shared"));  // queued behind it
  ASSERT_EQ(AwaitAssignment(worker0).job_id(), first);
  EXPECT_EQ(Get(second).state(), JOB_STATE_QUEUED);
  EXPECT_EQ(ReportOk(worker0, first, 250).global_step(), 250);  // ckpt-250
  StopJobRequest stop;
  stop.set_job_id(first);
  StopJobResponse stopped;
  ASSERT_TRUE(jobs_->StopJob(Context().get(), stop, &stopped).ok());
  EXPECT_TRUE(ReportOk(worker0, first, 0).stop());
  EXPECT_TRUE(ReportOk(worker1, first, 0).stop());
  AwaitState(first, JOB_STATE_STOPPED);

  // The queued job starts by itself, on the same model_dir. (The worker may
  // see itself idle in between.)
  Assignment assignment = AwaitAssignment(worker0, first);
  if (assignment.job_id().empty()) assignment = AwaitAssignment(worker0, "");
  ASSERT_EQ(assignment.job_id(), second);
  EXPECT_EQ(assignment.global_step(), 250);
  EXPECT_EQ(assignment.restore_checkpoint(), root_ + "/shared/ckpt-250");
  for (int i = 0; i < 2; ++i) {
    std::vector<RestoreRequest> restored = shards_[i].restored();
    ASSERT_EQ(restored.size(), 1u);
    EXPECT_EQ(restored[0].job_id(), second);
    EXPECT_EQ(restored[0].path(),
              absl::StrCat(root_, "/shared/ckpt-250/shard-0000", i, "-of-00002"));
  }
  EXPECT_EQ(Get(second).global_step(), 250);
  EXPECT_EQ(ReportOk(worker0, second, 10).global_step(), 260);
}

TEST_F(CoordinatorServiceTest, WatchJobStartsWithTheStatusAndEndsWithTheJob) {
  StartCoordinator();
  const std::string job_id = Submit(TrainSpec("m"));  // no members: it waits
  WatchJobRequest request;
  request.set_job_id(job_id);
  request.set_include_progress(true);
  auto context = Context();
  std::unique_ptr<grpc::ClientReader<JobEvent>> reader = jobs_->WatchJob(context.get(), request);
  JobEvent event;
  ASSERT_TRUE(reader->Read(&event));
  ASSERT_TRUE(event.has_status());
  EXPECT_EQ(event.status().job_id(), job_id);

  StopJobRequest stop;
  stop.set_job_id(job_id);
  stop.set_immediately(true);
  StopJobResponse stopped;
  ASSERT_TRUE(jobs_->StopJob(Context().get(), stop, &stopped).ok());
  JobState last = JOB_STATE_UNSPECIFIED;
  while (reader->Read(&event)) {
    if (event.has_status()) last = event.status().state();
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(last, JOB_STATE_STOPPED);

  // An ended job: its status, then the end.
  auto again = Context();
  reader = jobs_->WatchJob(again.get(), request);
  ASSERT_TRUE(reader->Read(&event));
  EXPECT_EQ(event.status().state(), JOB_STATE_STOPPED);
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_TRUE(reader->Finish().ok());

  request.set_job_id("nope-1");
  auto unknown = Context();
  reader = jobs_->WatchJob(unknown.get(), request);
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(CoordinatorServiceTest, ShutdownWaitsForTheRunningJobOrIsRefused) {
  StartCoordinator();
  std::vector<Caller> members = JoinCluster();
  const std::string job_id = Submit(TrainSpec("m"));
  ASSERT_EQ(AwaitAssignment(members[2]).job_id(), job_id);
  ShutdownRequest request;
  ShutdownResponse response;
  EXPECT_EQ(jobs_->Shutdown(Context().get(), request, &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  request.set_stop_running_job(true);
  ASSERT_TRUE(jobs_->Shutdown(Context().get(), request, &response).ok());
  EXPECT_TRUE(ReportOk(members[2], job_id, 0).stop());
  EXPECT_TRUE(ReportOk(members[3], job_id, 0).stop());
  AwaitState(job_id, JOB_STATE_STOPPED);
  // Members learn it from their heartbeats once the scheduler has seen the
  // job end (nothing offers a wait for that), then the process is told to
  // exit.
  HeartbeatResponse beat;
  for (absl::Time give_up = absl::Now() + kCallTimeout; absl::Now() < give_up;) {
    ASSERT_TRUE(Heartbeat(members[0], &beat).ok());
    if (beat.shutdown()) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(beat.shutdown());
  EXPECT_FALSE(shutdown_called_.HasBeenNotified());
  while (!shutdown_called_.HasBeenNotified()) {
    clock_.Advance(absl::Seconds(1));
    if (shutdown_called_.WaitForNotificationWithTimeout(absl::Milliseconds(10))) break;
  }
  SubmitJobRequest submit;
  SubmitJobResponse submitted;
  EXPECT_EQ(jobs_->SubmitJob(Context().get(), submit, &submitted).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
