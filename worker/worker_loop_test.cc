#include "worker/worker_loop.h"

#include <memory>
#include <thread>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "worker/testing/fake_cluster_service.h"
#include "worker/testing/fake_parameter_server.h"

namespace pstrain {
namespace worker {
namespace {

constexpr char kJob[] = "job-1";

// Logistic regression over synthetic click logs: 64 records of 2 fields,
// ids in [0, 20), batches of 8. Its variables: the table
// "linear/weights" [20, 1] (rows on both shards) and "linear/bias" [1].
JobSpec Spec(UpdateMode mode, int steps_per_loop) {
  JobSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        mode: JOB_MODE_TRAIN
        model { logistic_regression {} }
        train_data {
          synthetic_clicks { num_examples: 64 num_fields: 2 vocabulary_per_field: 10 seed: 3 }
          batch_size: 8
          shuffle: true
          prefetch_batches: 2
        }
      )pb",
      &spec));
  spec.mutable_training()->set_update_mode(mode);
  spec.mutable_training()->set_steps_per_loop(steps_per_loop);
  return spec;
}

class WorkerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(coordinator_.Start().ok());
    coordinator_.SetHeartbeatInterval(absl::Milliseconds(20));
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

  Assignment MakeAssignment(UpdateMode mode, int steps_per_loop) {
    Assignment a;
    a.set_job_id(kJob);
    *a.mutable_spec() = Spec(mode, steps_per_loop);
    for (auto& shard : shards_) a.add_ps_addresses(shard->address());
    VariablePlacement* bias = a.add_placements();
    bias->set_name("linear/bias");
    bias->set_shard_index(0);
    VariablePlacement* weights = a.add_placements();
    weights->set_name("linear/weights");
    weights->set_shard_index(-1);
    a.set_worker_rank(0);
    a.set_num_workers(1);
    coordinator_.SetAssignment(a);
    return a;
  }

  std::unique_ptr<WorkerLoop> NewLoop(bool overlap = true) {
    WorkerLoopOptions options;
    options.overlap_pull_with_push = overlap;
    options.assignment_wait = absl::Milliseconds(200);
    options.round_wait = absl::Seconds(1);
    options.backoff.initial_backoff = absl::Milliseconds(5);
    return std::make_unique<WorkerLoop>(*client_, options, clock_, random_, metrics_.get());
  }

  // Sums of every report the coordinator received.
  ProgressReport Totals() {
    ProgressReport total;
    for (const ProgressReport& r : coordinator_.reports()) {
      total.set_steps(total.steps() + r.steps());
      total.set_examples(total.examples() + r.examples());
      total.set_applied_updates(total.applied_updates() + r.applied_updates());
    }
    return total;
  }

  RealClock clock_;
  SeededRandom random_{9};
  FakeClusterService coordinator_;
  std::vector<std::unique_ptr<FakeParameterServer>> shards_;
  std::unique_ptr<CoordinatorClient> client_;
  prometheus::Registry registry_;
  std::unique_ptr<WorkerMetrics> metrics_;
};

TEST_F(WorkerLoopTest, RecordsOfAStalePushAreHandedBackWithTheLease) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_ASYNC, 2);
  coordinator_.AddLease(/*lease_id=*/41, 0, 32);
  shards_[1]->SetOutcome([](const PushRequest& push) -> std::optional<PushResult> {
    if (push.id().sequence() != 2) return std::nullopt;
    PushResult r;
    r.set_outcome(PUSH_OUTCOME_STALE);
    return r;
  });
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/true);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  std::vector<CompleteDataLeaseRequest> completions = coordinator_.completions();
  ASSERT_EQ(completions.size(), 1u);
  EXPECT_EQ(completions[0].lease_id(), 41);
  EXPECT_EQ(completions[0].job_id(), kJob);
  ASSERT_EQ(completions[0].returned_size(), 1);
  // The second batch of 8 records.
  EXPECT_EQ(completions[0].returned(0).begin(), 8);
  EXPECT_EQ(completions[0].returned(0).end(), 16);

  // Four steps ran and were reported; the stale one is not an update.
  const ProgressReport total = Totals();
  EXPECT_EQ(total.steps(), 4);
  EXPECT_EQ(total.examples(), 32);
  EXPECT_EQ(total.applied_updates(), 3);
  EXPECT_EQ(shards_[0]->applied(), 4);
  EXPECT_EQ(shards_[1]->applied(), 3);
  for (const auto& push : shards_[0]->received()) EXPECT_EQ(push.examples, 8);
}

TEST_F(WorkerLoopTest, EveryPushNamesTheLeaseRecordsItsGradientsCameFrom) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_ASYNC, 2);
  coordinator_.AddLease(/*lease_id=*/41, 0, 16, /*epoch=*/0);
  coordinator_.AddLease(/*lease_id=*/42, 16, 32, /*epoch=*/1);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/true);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  // Batches of 8: records [0, 8) and [8, 16) of lease 41, [16, 24) and
  // [24, 32) of lease 42, in order.
  const std::vector<FakeParameterServer::ReceivedPush> pushes = shards_[0]->received();
  ASSERT_EQ(pushes.size(), 4u);
  for (size_t i = 0; i < pushes.size(); ++i) {
    ASSERT_TRUE(pushes[i].origin.has_value()) << "push " << i;
    const PushOrigin& origin = *pushes[i].origin;
    EXPECT_EQ(origin.lease_id(), i < 2 ? 41 : 42);
    EXPECT_EQ(origin.epoch(), i < 2 ? 0 : 1);
    EXPECT_EQ(origin.records().begin(), static_cast<int64_t>(8 * i));
    EXPECT_EQ(origin.records().end(), static_cast<int64_t>(8 * i + 8));
  }
}

TEST_F(WorkerLoopTest, ReportsProgressEveryStepsPerLoopSteps) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_ASYNC, 2);
  coordinator_.AddLease(1, 0, 24);
  coordinator_.AddLease(2, 24, 48);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  std::vector<ProgressReport> reports = coordinator_.reports();
  // Three of two steps each, then an empty one after the data ran out,
  // which hears the stop.
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports.back().steps(), 0);
  EXPECT_EQ(reports.back().sequence(), 4u);
  reports.pop_back();
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].sequence(), i + 1);
    EXPECT_EQ(reports[i].steps(), 2);
    EXPECT_EQ(reports[i].examples(), 16);
    EXPECT_EQ(reports[i].applied_updates(), 2);
    EXPECT_GT(reports[i].seconds(), 0);
    EXPECT_TRUE(std::isfinite(reports[i].loss()));
    EXPECT_EQ(reports[i].job_id(), kJob);
  }
  EXPECT_EQ(reports.back().parameter_version(), 5);  // read before the 6th push
  ASSERT_EQ(coordinator_.completions().size(), 2u);
  EXPECT_EQ(coordinator_.completions()[1].returned_size(), 0);
  // Training moved the bias.
  EXPECT_NE(shards_[0]->dense("linear/bias")[0], 0.0f);
}

TEST_F(WorkerLoopTest, StopsWhenTheCoordinatorSaysSoAndHandsBackTheRest) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_ASYNC, 2);
  coordinator_.AddLease(7, 0, 64);
  coordinator_.AddLease(8, 0, 64, /*epoch=*/1);
  coordinator_.StopAfterReports(1);
  std::unique_ptr<WorkerLoop> loop = NewLoop(/*overlap=*/false);
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());

  EXPECT_EQ(coordinator_.reports().size(), 1u);
  std::vector<CompleteDataLeaseRequest> completions = coordinator_.completions();
  ASSERT_EQ(completions.size(), 1u);  // the second lease was never taken
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), 16);
  EXPECT_EQ(completions[0].returned(0).end(), 64);
  EXPECT_EQ(shards_[0]->applied(), 2);
}

TEST_F(WorkerLoopTest, WorkerWithoutDataReportsUntilItHearsTheStop) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_ASYNC, 100);
  coordinator_.AddLease(1, 0, 16);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  std::vector<ProgressReport> reports = coordinator_.reports();
  ASSERT_FALSE(reports.empty());
  // Its two steps are reported once the data ran out, and the answer said
  // stop.
  EXPECT_EQ(Totals().steps(), 2);
  EXPECT_EQ(reports.back().job_id(), kJob);
}

TEST_F(WorkerLoopTest, StopsWhenHeartbeatsNameAnotherJob) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_ASYNC, 4);
  for (int i = 0; i < 500; ++i) coordinator_.AddLease(i, 0, 64, i);
  client_->member().StartHeartbeats();
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->RunAssignment(assignment); });
  ASSERT_TRUE(coordinator_.WaitForCompletions(1, absl::Seconds(30)));
  Assignment next;
  next.set_job_id("job-2");
  coordinator_.SetAssignment(next);
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_LT(coordinator_.completions().size(), 500u);
}

TEST_F(WorkerLoopTest, SyncModeWaitsForEachRoundBeforeTheNextPull) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_SYNC, 100);
  coordinator_.AddLease(1, 0, 24);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  // The fake applies each push at once, so every round is complete when
  // the next pull asks for it; the pushes name consecutive versions.
  std::vector<FakeParameterServer::ReceivedPush> pushes = shards_[1]->received();
  ASSERT_EQ(pushes.size(), 3u);
  for (size_t i = 0; i < pushes.size(); ++i) EXPECT_EQ(pushes[i].base_version, i);
}

TEST_F(WorkerLoopTest, SyncWorkerTakingALeaseUpSkipsTheBatchesOfCompletedRounds) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_SYNC, 100);
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

TEST_F(WorkerLoopTest, SyncWorkerCompletesALeaseWhoseRoundsAreAllPast) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_SYNC, 100);
  coordinator_.AddLeaseFromRound(1, 0, 16, 0);  // rounds 0 and 1
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

TEST_F(WorkerLoopTest, SyncWorkerKeepsItsSlotsLeaseWhenTrainingFails) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_SYNC, 100);
  coordinator_.AddLeaseFromRound(1, 0, 64, 0);
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
  // Its rounds need exactly this data, so the lease is not completed (with
  // its records handed back to whoever asks): the next run takes it up.
  EXPECT_THAT(coordinator_.completions(), ::testing::IsEmpty());
}

TEST_F(WorkerLoopTest, SyncWorkerWaitingForARoundHearsTheStop) {
  const Assignment assignment = MakeAssignment(UPDATE_MODE_SYNC, 100);
  coordinator_.AddLease(1, 0, 64);
  coordinator_.StopAfterReports(1);
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
  ASSERT_TRUE(loop->RunAssignment(assignment).ok());
  std::vector<ProgressReport> reports = coordinator_.reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].steps(), 1);
  std::vector<CompleteDataLeaseRequest> completions = coordinator_.completions();
  ASSERT_EQ(completions.size(), 1u);
  ASSERT_EQ(completions[0].returned_size(), 1);
  EXPECT_EQ(completions[0].returned(0).begin(), 8);  // the first batch was pushed
  EXPECT_EQ(completions[0].returned(0).end(), 64);
}

TEST_F(WorkerLoopTest, RunServesAssignmentsUntilTheClusterShutsDown) {
  coordinator_.AddLease(1, 0, 16);
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->Run(); });
  MakeAssignment(UPDATE_MODE_ASYNC, 1);
  ASSERT_TRUE(coordinator_.WaitForCompletions(1, absl::Seconds(30)));
  coordinator_.SetShutdown(true);
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_TRUE(loop->shutdown_requested());
  EXPECT_EQ(Totals().steps(), 2);
  EXPECT_GT(coordinator_.heartbeats(), 0);
}

TEST_F(WorkerLoopTest, StopEndsRunWhileIdle) {
  std::unique_ptr<WorkerLoop> loop = NewLoop();
  absl::Status result;
  std::thread runner([&] { result = loop->Run(); });
  absl::SleepFor(absl::Milliseconds(50));
  loop->Stop();
  runner.join();
  EXPECT_TRUE(result.ok()) << result;
  EXPECT_FALSE(loop->shutdown_requested());
}

}  // namespace
}  // namespace worker
}  // namespace pstrain
