// The worker loop against the real coordinator, served in this process
// (InProcessCoordinator, jobs planned from their specs as in production),
// and two fake parameter servers over gRPC, which ps/0 and ps/1 register
// with. The coordinator's own calls to its parameter servers reach
// in-memory shards at the same addresses. The test submits each job; its
// data (records per lease, epochs) and stop conditions decide the leases
// and when the coordinator answers stop. What the worker sent and the
// coordinator accepted is read from the worker's channel
// (CoordinatorCallLog). Leases taken up by a worker from a later round of
// deterministic sync mode are served by a scripted coordinator
// (FakeClusterService): the real one deals them only after another worker
// of the job is lost holding one mid-way.

#include "worker/worker_loop.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/synthetic_clicks.h"
#include "common/data/tfrecord_writer.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/coordinator/testing/coordinator_call_log.h"
#include "server/coordinator/testing/in_process_coordinator.h"
#include "worker/testing/fake_cluster_service.h"
#include "worker/testing/fake_parameter_server.h"

namespace pstrain {
namespace worker {
namespace {

using coordinator::CoordinatorCallLog;
using coordinator::InProcessCoordinator;

constexpr absl::Duration kWait = absl::Seconds(30);

// Logistic regression over synthetic click logs: `num_examples` records of
// 2 fields, ids in [0, 20), batches of 8. Its variables: the table
// "linear/weights" [20, 1] (rows on both shards) and "linear/bias" [1]
// (on shard 0).
JobSpec Spec(UpdateMode mode, int steps_per_loop, int num_examples = 64, int epochs = 1) {
  JobSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        mode: JOB_MODE_TRAIN
        model { logistic_regression {} }
        train_data {
          synthetic_clicks { num_fields: 2 vocabulary_per_field: 10 seed: 3 }
          batch_size: 8
          shuffle: true
          prefetch_batches: 2
        }
      )pb",
      &spec));
  spec.mutable_train_data()->mutable_synthetic_clicks()->set_num_examples(num_examples);
  spec.mutable_train_data()->set_epochs(epochs);
  spec.mutable_training()->set_update_mode(mode);
  spec.mutable_training()->set_steps_per_loop(steps_per_loop);
  return spec;
}

std::unique_ptr<WorkerLoop> NewLoop(CoordinatorClient& client, Clock& clock, RandomSource& random,
                                    WorkerMetrics* metrics, bool overlap = true) {
  WorkerLoopOptions options;
  options.overlap_pull_with_push = overlap;
  options.assignment_wait = absl::Milliseconds(200);
  options.round_wait = absl::Seconds(1);
  options.backoff.initial_backoff = absl::Milliseconds(5);
  return std::make_unique<WorkerLoop>(client, options, clock, random, metrics);
}

class WorkerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int s = 0; s < 2; ++s) {
      shards_.push_back(std::make_unique<FakeParameterServer>(s, 2));
      shards_[s]->AddTable("linear/weights", 1);
      ASSERT_TRUE(shards_[s]->Start().ok());
    }
    shards_[0]->AddDense("linear/bias", {1}, {0});
    root_ = NewTestDir(env_);
    metrics_ = std::make_unique<WorkerMetrics>(registry_);
  }

  // Starts the coordinator, whose jobs lease `records_per_lease` records at
  // a time, and registers the worker (worker/0) and the parameter servers.
  void StartCoordinator(int records_per_lease) {
    coordinator::CoordinatorOptions options;
    options.checkpoint_root = root_;
    options.runner.num_ps = 2;
    options.runner.num_workers = 1;
    options.runner.records_per_lease = records_per_lease;
    // Heartbeats of a worker on a real clock come quickly.
    options.membership.heartbeat_interval = absl::Milliseconds(20);
    std::vector<std::string> addresses;
    for (auto& shard : shards_) addresses.push_back(shard->address());
    coordinator_ = std::make_unique<InProcessCoordinator>(
        options, addresses, InProcessCoordinator::Planning::kFromSpec);
    for (int i = 0; i < 2; ++i) {
      RegisterRequest request;
      request.mutable_task()->set_type(TASK_TYPE_PS);
      request.mutable_task()->set_index(i);
      request.set_incarnation(1);
      request.set_address(shards_[i]->address());
      ASSERT_TRUE(coordinator_->coordinator().Register(request).ok());
    }
    CoordinatorClientOptions client_options;
    client_options.task.set_type(TASK_TYPE_WORKER);
    client_options.task.set_index(0);
    absl::StatusOr<std::unique_ptr<CoordinatorClient>> client =
        CoordinatorClient::Create(calls_.NewChannel(coordinator_->address()), client_options,
                                  MemberSession::NewIncarnation(random_), clock_, random_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    ASSERT_TRUE(client_->member().Register().ok());
  }

  // Submits a job of `spec`; its id.
  std::string Submit(JobSpec spec) {
    SubmitJobRequest submit;
    *submit.mutable_spec() = std::move(spec);
    submit.mutable_spec()->set_name(absl::StrCat("job-", ++jobs_));
    submit.mutable_spec()->mutable_checkpoint()->set_model_dir(
        JoinPath(root_, absl::StrCat("model-", jobs_)));
    absl::StatusOr<SubmitJobResponse> submitted = coordinator_->coordinator().SubmitJob(submit);
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    return submitted.ok() ? submitted->job_id() : "";
  }

  // Starts the coordinator and a job of `spec`; the worker's assignment.
  Assignment StartJob(const JobSpec& spec, int records_per_lease) {
    StartCoordinator(records_per_lease);
    job_id_ = Submit(spec);
    if (job_id_.empty()) return Assignment();
    absl::StatusOr<Assignment> assignment = client_->member().GetAssignment("", 0, kWait);
    EXPECT_TRUE(assignment.ok()) << assignment.status();
    if (!assignment.ok()) return Assignment();
    EXPECT_EQ(assignment->job_id(), job_id_);
    return *assignment;
  }

  std::unique_ptr<WorkerLoop> NewLoop(bool overlap = true) {
    return worker::NewLoop(*client_, clock_, random_, metrics_.get(), overlap);
  }

  std::vector<ProgressReport> Reports() const {
    return calls_.Requests<ProgressReport>("ReportProgress");
  }
  std::vector<CompleteDataLeaseRequest> Completions() const {
    return calls_.Requests<CompleteDataLeaseRequest>("CompleteDataLease");
  }
  // The leases the coordinator handed out, end_of_data ones left out.
  std::vector<DataLease> Leases() const {
    std::vector<DataLease> leases;
    for (DataLease& lease : calls_.Responses<DataLease>("AcquireDataLease")) {
      if (!lease.end_of_data()) leases.push_back(std::move(lease));
    }
    return leases;
  }

  // Sums of every report the coordinator accepted.
  ProgressReport Totals() const {
    ProgressReport total;
    for (const ProgressReport& r : Reports()) {
      total.set_steps(total.steps() + r.steps());
      total.set_examples(total.examples() + r.examples());
      total.set_applied_updates(total.applied_updates() + r.applied_updates());
    }
    return total;
  }

  PosixEnv env_;
  std::string root_;
  RealClock clock_;
  SeededRandom random_{9};
  std::vector<std::unique_ptr<FakeParameterServer>> shards_;
  std::unique_ptr<InProcessCoordinator> coordinator_;
  CoordinatorCallLog calls_;
  std::unique_ptr<CoordinatorClient> client_;
  prometheus::Registry registry_;
  std::unique_ptr<WorkerMetrics> metrics_;
  int jobs_ = 0;
  std::string job_id_;
};

TEST_F(WorkerLoopTest, RecordsOfAStalePushAreHandedBackWithTheLease) {
  // One lease of 32 records.
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/32), 32);
  shards_[1]->SetOutcome([](const PushRequest& push) -> std::optional<PushResult> {
    if (push.id().sequence() != 2) return std::nullopt;
    PushResult r;
    r.set_outcome(PUSH_OUTCOME_STALE);
    return r;
  });
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/true);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 2u);
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 2u);
  EXPECT_EQ(completions[0].lease_id(), leases[0].lease_id());
  EXPECT_EQ(completions[0].job_id(), job_id_);
  ASSERT_EQ(completions[0].returned_size(), 1);
  // The second batch of 8 records, which the next lease trains again.
  EXPECT_EQ(completions[0].returned(0).begin(), 8);
  EXPECT_EQ(completions[0].returned(0).end(), 16);
  EXPECT_EQ(leases[1].range().begin(), 8);
  EXPECT_EQ(leases[1].range().end(), 16);
  EXPECT_EQ(completions[1].lease_id(), leases[1].lease_id());
  EXPECT_EQ(completions[1].returned_size(), 0);

  // Five steps ran and were reported; the stale one is not an update.
  const ProgressReport total = Totals();
  EXPECT_EQ(total.steps(), 5);
  EXPECT_EQ(total.examples(), 40);
  EXPECT_EQ(total.applied_updates(), 4);
  EXPECT_EQ(shards_[0]->applied(), 5);
  EXPECT_EQ(shards_[1]->applied(), 4);
  for (const auto& push : shards_[0]->received()) EXPECT_EQ(push.examples, 8);
}

TEST_F(WorkerLoopTest, EveryPushNamesTheLeaseRecordsItsGradientsCameFrom) {
  // Two epochs of 16 records, a lease each.
  const Assignment assignment =
      StartJob(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/16, /*epochs=*/2), 16);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/true);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 2u);
  // Batches of 8: records [0, 8) and [8, 16) of the first lease (epoch 0),
  // then of the second (epoch 1), in order.
  const std::vector<FakeParameterServer::ReceivedPush> pushes = shards_[0]->received();
  ASSERT_EQ(pushes.size(), 4u);
  for (size_t i = 0; i < pushes.size(); ++i) {
    ASSERT_TRUE(pushes[i].origin.has_value()) << "push " << i;
    const PushOrigin& origin = *pushes[i].origin;
    EXPECT_EQ(origin.lease_id(), leases[i / 2].lease_id());
    EXPECT_EQ(origin.epoch(), i < 2 ? 0 : 1);
    EXPECT_EQ(origin.records().begin(), static_cast<int64_t>(8 * (i % 2)));
    EXPECT_EQ(origin.records().end(), static_cast<int64_t>(8 * (i % 2) + 8));
  }
}

TEST_F(WorkerLoopTest, ReportsProgressEveryStepsPerLoopSteps) {
  // Two leases of 24 records.
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/48), 24);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  std::vector<ProgressReport> reports = Reports();
  // Three of two steps each, then an empty one after the data ran out,
  // which hears the stop.
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports.back().steps(), 0);
  EXPECT_EQ(reports.back().sequence(), 4u);
  EXPECT_TRUE(calls_.Responses<ProgressResponse>("ReportProgress").back().stop());
  reports.pop_back();
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].sequence(), i + 1);
    EXPECT_EQ(reports[i].steps(), 2);
    EXPECT_EQ(reports[i].examples(), 16);
    EXPECT_EQ(reports[i].applied_updates(), 2);
    EXPECT_GT(reports[i].seconds(), 0);
    EXPECT_TRUE(std::isfinite(reports[i].loss()));
    EXPECT_EQ(reports[i].job_id(), job_id_);
  }
  EXPECT_EQ(reports.back().parameter_version(), 5);  // read before the 6th push
  ASSERT_EQ(Completions().size(), 2u);
  EXPECT_EQ(Completions()[1].returned_size(), 0);
  // Training moved the bias.
  EXPECT_NE(shards_[0]->dense("linear/bias")[0], 0.0f);
}

TEST_F(WorkerLoopTest, StopsWhenTheCoordinatorSaysSoAndHandsBackTheRest) {
  // Leases of a whole epoch; the job stops at global step 2, the first
  // report.
  JobSpec spec = Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/64, /*epochs=*/2);
  spec.mutable_stop()->set_max_steps(2);
  const Assignment assignment = StartJob(spec, 64);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  EXPECT_EQ(Reports().size(), 1u);
  EXPECT_EQ(Leases().size(), 1u);  // the second epoch's lease was never taken
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 1u);
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), 16);
  EXPECT_EQ(completions[0].returned(0).end(), 64);
  EXPECT_EQ(shards_[0]->applied(), 2);
}

// The spec's click logs written as TFRecord under `dir` and read streamed,
// in blocks of 4 records and windows of 2 blocks.
SyntheticClicksSource FilledClicks(SyntheticClicksSource clicks) {
  FillSyntheticClicksDefaults(&clicks);
  return clicks;
}

JobSpec StreamedSpec(JobSpec spec, const std::string& dir) {
  PosixEnv env;
  absl::StatusOr<std::unique_ptr<SyntheticClicks>> clicks =
      SyntheticClicks::Create(FilledClicks(spec.train_data().synthetic_clicks()),
                              /*test_split=*/false);
  EXPECT_TRUE(clicks.ok()) << clicks.status();
  const std::string path = JoinPath(dir, "clicks.tfrecord");
  EXPECT_TRUE(WriteTfRecordFile(env, path, **clicks).ok());
  DataSpec& data = *spec.mutable_train_data();
  TfRecordSource& tfrecord = *data.mutable_tfrecord();
  tfrecord.add_paths(path);
  tfrecord.add_sparse_features("field_0");
  tfrecord.add_sparse_features("field_1");
  tfrecord.set_label("label");
  data.set_read_mode(DataSpec::READ_MODE_STREAMED);
  data.set_stream_block_records(4);
  data.set_shuffle_window_blocks(2);
  return spec;
}

TEST_F(WorkerLoopTest, OnStreamedDataTheNextLeaseIsTakenAheadAndEveryRecordTrainedOnce) {
  // Four leases of 16 records, each taken while the one before trains.
  const Assignment assignment =
      StartJob(StreamedSpec(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/64), root_), 16);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/true);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 4u);
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 4u);
  std::vector<int> trained(64, 0);
  for (const auto& push : shards_[0]->received()) {
    ASSERT_TRUE(push.origin.has_value());
    for (int64_t r = push.origin->records().begin(); r < push.origin->records().end(); ++r) {
      ++trained[r];
    }
  }
  EXPECT_THAT(trained, ::testing::Each(1));
  for (size_t i = 0; i < completions.size(); ++i) {
    EXPECT_EQ(completions[i].lease_id(), leases[i].lease_id());
    EXPECT_EQ(completions[i].returned_size(), 0);
  }
}

TEST_F(WorkerLoopTest, OnStreamedDataTheLeaseTakenAheadIsHandedBackWholeAtTheStop) {
  // Leases of 32; the job stops at global step 2, the first report, after
  // the second lease was taken ahead.
  JobSpec spec = StreamedSpec(Spec(UPDATE_MODE_ASYNC, 2, /*num_examples=*/64), root_);
  spec.mutable_stop()->set_max_steps(2);
  const Assignment assignment = StartJob(spec, 32);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 2u);
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 2u);
  // The lease in hand: its last two batches back.
  EXPECT_EQ(completions[0].lease_id(), leases[0].lease_id());
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), 16);
  EXPECT_EQ(completions[0].returned(0).end(), 32);
  // The lease ahead, untouched: all of it back.
  EXPECT_EQ(completions[1].lease_id(), leases[1].lease_id());
  ASSERT_EQ(completions[1].returned_size(), 1);
  EXPECT_EQ(completions[1].returned(0).begin(), leases[1].range().begin());
  EXPECT_EQ(completions[1].returned(0).end(), leases[1].range().end());
  EXPECT_EQ(shards_[0]->applied(), 2);
}

TEST_F(WorkerLoopTest, WorkerWithoutDataReportsUntilItHearsTheStop) {
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_ASYNC, 100, /*num_examples=*/16), 16);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  std::vector<ProgressReport> reports = Reports();
  ASSERT_FALSE(reports.empty());
  // Its two steps are reported once the data ran out, and the answer said
  // stop.
  EXPECT_EQ(Totals().steps(), 2);
  EXPECT_EQ(reports.back().job_id(), job_id_);
  EXPECT_TRUE(calls_.Responses<ProgressResponse>("ReportProgress").back().stop());
}

TEST_F(WorkerLoopTest, StopsWhenHeartbeatsNameAnotherJob) {
  // One lease of 12,500 batches and no report before it ends: only
  // heartbeats can tell the worker its job changed.
  constexpr int kRecords = 100000;
  JobSpec spec = Spec(UPDATE_MODE_ASYNC, 1000000, kRecords);
  const Assignment assignment = StartJob(spec, kRecords);
  client_->member().StartHeartbeats();
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->RunAssignment(assignment); });
  ASSERT_TRUE(calls_.WaitForCalls("AcquireDataLease", 1, kWait));
  StopJobRequest stop;
  stop.set_job_id(job_id_);
  stop.set_immediately(true);
  ASSERT_TRUE(coordinator_->coordinator().StopJob(stop).ok());
  EXPECT_FALSE(Submit(Spec(UPDATE_MODE_ASYNC, 1)).empty());
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_LT(shards_[0]->applied(), kRecords / 8);
  // The heartbeats named the next job, or none between the two.
  bool heard_other = false;
  for (const HeartbeatResponse& beat : calls_.Responses<HeartbeatResponse>("Heartbeat")) {
    heard_other = heard_other || beat.job_id() != job_id_;
  }
  EXPECT_TRUE(heard_other);
}

TEST_F(WorkerLoopTest, SyncModeWaitsForEachRoundBeforeTheNextPull) {
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/24), 24);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  // The fake applies each push at once, so every round is complete when
  // the next pull asks for it; the pushes name consecutive versions.
  std::vector<FakeParameterServer::ReceivedPush> pushes = shards_[1]->received();
  ASSERT_EQ(pushes.size(), 3u);
  for (size_t i = 0; i < pushes.size(); ++i) EXPECT_EQ(pushes[i].base_version, i);
}

TEST_F(WorkerLoopTest, SyncWorkerKeepsItsSlotsLeaseWhenTrainingFails) {
  // One worker in deterministic sync mode: its slot's lease covers rounds
  // 0 to 7.
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/64), 64);
  // The second push is refused: this run ends with the error.
  for (auto& shard : shards_) {
    shard->SetOutcome([](const PushRequest& push) -> std::optional<PushResult> {
      if (push.id().sequence() != 2) return std::nullopt;
      PushResult r;
      r.set_outcome(PUSH_OUTCOME_REJECTED);
      r.mutable_status()->set_code(static_cast<int>(absl::StatusCode::kInvalidArgument));
      r.mutable_status()->set_message("refused for the test");
      return r;
    });
  }
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  const absl::Status result = loop->RunAssignment(assignment);
  EXPECT_THAT(result.message(), ::testing::HasSubstr("refused for the test"));
  const std::vector<DataLease> leases = Leases();
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].first_round(), 0);
  // Its rounds need exactly this data, so the lease is not completed (with
  // its records handed back to whoever asks): the next run takes it up.
  EXPECT_THAT(Completions(), ::testing::IsEmpty());
}

TEST_F(WorkerLoopTest, SyncWorkerWaitingForARoundHearsTheStop) {
  const Assignment assignment = StartJob(Spec(UPDATE_MODE_SYNC, 100, /*num_examples=*/64), 64);
  // Every push joins a round that never completes: the other workers
  // have stopped.
  for (auto& shard : shards_) {
    shard->SetOutcome([](const PushRequest&) -> std::optional<PushResult> {
      PushResult r;
      r.set_outcome(PUSH_OUTCOME_AGGREGATED);
      return r;
    });
  }
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->RunAssignment(assignment); });
  // While it waits, it asks whether the job still runs.
  ASSERT_TRUE(calls_.WaitForCalls("ReportProgress", 1, kWait));
  StopJobRequest stop;
  stop.set_job_id(job_id_);
  ASSERT_TRUE(coordinator_->coordinator().StopJob(stop).ok());
  runner.join();
  ASSERT_TRUE(result.ok()) << result;
  EXPECT_EQ(Totals().steps(), 1);
  std::vector<CompleteDataLeaseRequest> completions = Completions();
  ASSERT_EQ(completions.size(), 1u);
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), 8);  // the first batch was pushed
  EXPECT_EQ(completions[0].returned(0).end(), 64);
}

TEST_F(WorkerLoopTest, RunServesAssignmentsUntilTheClusterShutsDown) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(16));
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->Run(); });
  job_id_ = Submit(Spec(UPDATE_MODE_ASYNC, 1, /*num_examples=*/16));
  ASSERT_TRUE(calls_.WaitForCalls("CompleteDataLease", 1, kWait));
  ShutdownRequest shutdown;
  shutdown.set_stop_running_job(true);
  ASSERT_TRUE(coordinator_->coordinator().Shutdown(shutdown).ok());
  // The coordinator answers the worker's long polls for an assignment at
  // deadlines of its clock: from now on they pass at once.
  coordinator_->clock().JumpToDeadlines();
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_TRUE(loop->shutdown_requested());
  EXPECT_EQ(Totals().steps(), 2);
  EXPECT_GT(calls_.Count("Heartbeat"), 0u);
}

TEST_F(WorkerLoopTest, StopEndsRunWhileIdle) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator(16));
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->Run(); });
  // Run() registers once more before it waits for an assignment.
  ASSERT_TRUE(calls_.WaitForCalls("Register", 2, kWait));
  loop->Stop();
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_FALSE(loop->shutdown_requested());
}

// Leases from a later round of deterministic sync mode, scripted (see the
// file comment).
class SyncLeaseTakeUpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(coordinator_.Start().ok());
    for (int s = 0; s < 2; ++s) {
      shards_.push_back(std::make_unique<FakeParameterServer>(s, 2));
      shards_[s]->AddTable("linear/weights", 1);
      ASSERT_TRUE(shards_[s]->Start().ok());
    }
    shards_[0]->AddDense("linear/bias", {1}, {0});
    CoordinatorClientOptions options;
    options.task.set_type(TASK_TYPE_WORKER);
    options.task.set_index(0);
    client_ = *CoordinatorClient::Create(
        grpc::CreateChannel(coordinator_.address(), grpc::InsecureChannelCredentials()), options,
        MemberSession::NewIncarnation(random_), clock_, random_);
    ASSERT_TRUE(client_->member().Register().ok());
    metrics_ = std::make_unique<WorkerMetrics>(registry_);
  }

  Assignment MakeAssignment() {
    Assignment a;
    a.set_job_id("job-1");
    *a.mutable_spec() = Spec(UPDATE_MODE_SYNC, 100);
    for (auto& shard : shards_) a.add_ps_addresses(shard->address());
    VariablePlacement* bias = a.add_placements();
    bias->set_name("linear/bias");
    bias->set_shard_index(0);
    VariablePlacement* weights = a.add_placements();
    weights->set_name("linear/weights");
    weights->set_shard_index(-1);
    a.set_worker_rank(0);
    a.set_num_workers(1);
    return a;
  }

  std::unique_ptr<WorkerLoop> NewLoop() {
    return worker::NewLoop(*client_, clock_, random_, metrics_.get());
  }

  RealClock clock_;
  SeededRandom random_{9};
  FakeClusterService coordinator_;
  std::vector<std::unique_ptr<FakeParameterServer>> shards_;
  std::unique_ptr<CoordinatorClient> client_;
  prometheus::Registry registry_;
  std::unique_ptr<WorkerMetrics> metrics_;
};

TEST_F(SyncLeaseTakeUpTest, SyncWorkerTakingALeaseUpSkipsTheBatchesOfCompletedRounds) {
  const Assignment assignment = MakeAssignment();
  // A lost worker held this lease from round 3; rounds 3 and 4 are
  // complete, so its batches 0 and 1 are trained. 64 records: 8 batches.
  coordinator_.AddLeaseFromRound(1, 0, 64, 3);
  for (auto& shard : shards_) shard->SetVersion(5);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  // Batches 2..7, for rounds 5..10.
  std::vector<FakeParameterServer::ReceivedPush> pushes = shards_[1]->received();
  ASSERT_EQ(pushes.size(), 6u);
  for (size_t i = 0; i < pushes.size(); ++i) EXPECT_EQ(pushes[i].base_version, 5 + i);
  // The whole lease is done: nothing handed back.
  std::vector<CompleteDataLeaseRequest> completions = coordinator_.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].returned_size(), 0);
}

TEST_F(SyncLeaseTakeUpTest, SyncWorkerCompletesALeaseWhoseRoundsAreAllPast) {
  const Assignment assignment = MakeAssignment();
  coordinator_.AddLeaseFromRound(1, 0, 16, 0);   // rounds 0 and 1
  coordinator_.AddLeaseFromRound(2, 16, 32, 2);  // rounds 2 and 3
  for (auto& shard : shards_) shard->SetVersion(3);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  // Only round 3's batch is left to train: the second batch of lease 2.
  std::vector<FakeParameterServer::ReceivedPush> pushes = shards_[1]->received();
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0].base_version, 3);
  std::vector<CompleteDataLeaseRequest> completions = coordinator_.completions();
  ASSERT_EQ(completions.size(), 2u);
  EXPECT_EQ(completions[0].returned_size(), 0);
  EXPECT_EQ(completions[1].returned_size(), 0);
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
