// The job lifecycle through the gRPC-free Coordinator core: how each stop
// condition ends a job, evaluation-only jobs, resuming past a damaged
// checkpoint, warm starts, and the metrics. Parameter servers are in-memory
// fakes; time is a FakeClock.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/clock/fake_clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/testing/fake_planner.h"
#include "server/coordinator/testing/fake_shard.h"
#include "server/coordinator/testing/source_reader.h"

namespace pstrain {
namespace coordinator {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(30);

struct Caller {
  TaskId task;
  uint64_t incarnation = 1;
  uint64_t sequence = 0;
};

Caller Task(TaskType type, int index) {
  Caller caller;
  caller.task.set_type(type);
  caller.task.set_index(index);
  return caller;
}

class JobLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = JoinPath(::testing::TempDir(),
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    RemoveTree(env_, root_).IgnoreError();
    ASSERT_TRUE(CreateDirs(env_, root_).ok());
    options_.checkpoint_root = root_;
    options_.runner.num_ps = 2;
    options_.runner.num_workers = 2;
    // Time jumps far in some tests; members must not be lost meanwhile.
    options_.membership.heartbeat_timeout = absl::Hours(10);
  }

  void Start() {
    absl::StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Create(
        clock_, env_, planner_, FakeShardClients({&shards_[0], &shards_[1]}), &metrics_, options_);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    coordinator_->Start();
  }

  Caller Join(TaskType type, int index) {
    Caller caller = Task(type, index);
    RegisterRequest request;
    *request.mutable_task() = caller.task;
    request.set_incarnation(caller.incarnation);
    if (type == TASK_TYPE_PS) request.set_address(shards_[index].address());
    EXPECT_TRUE(coordinator_->Register(request).ok());
    return caller;
  }

  std::string Submit(const std::string& text) {
    SubmitJobRequest request;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, request.mutable_spec()));
    absl::StatusOr<SubmitJobResponse> response = coordinator_->SubmitJob(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->job_id() : "";
  }

  // Waits (real time) until the job's assignment reaches `caller`.
  Assignment AwaitAssignment(const Caller& caller) {
    absl::Notification done;
    Assignment got;
    Assignment now;
    const uint64_t id = coordinator_->assignments().Await(
        caller.task, "", 0, absl::InfiniteFuture(),
        [&](const Assignment& a) {
          got = a;
          done.Notify();
        },
        &now);
    if (id == 0) return now;
    if (!done.WaitForNotificationWithTimeout(kTimeout)) {
      coordinator_->assignments().Cancel(id);
      ADD_FAILURE() << "no assignment";
    }
    return got;
  }

  absl::StatusOr<DataLease> Acquire(const Caller& worker, const std::string& job_id) {
    AcquireDataLeaseRequest request;
    *request.mutable_task() = worker.task;
    request.set_incarnation(worker.incarnation);
    request.set_job_id(job_id);
    return coordinator_->AcquireDataLease(request);
  }

  ProgressResponse Report(Caller& caller, const std::string& job_id, int64_t updates,
                          double loss = 0.5) {
    ProgressReport report;
    *report.mutable_task() = caller.task;
    report.set_incarnation(caller.incarnation);
    report.set_job_id(job_id);
    report.set_steps(updates > 0 ? updates : 0);
    report.set_applied_updates(updates);
    report.set_loss(loss);
    report.set_sequence(++caller.sequence);
    absl::StatusOr<ProgressResponse> response = coordinator_->ReportProgress(report);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.value_or(ProgressResponse());
  }

  // Waits until the job's status lists the checkpoint of `step`.
  void AwaitCheckpoint(const std::string& job_id, int64_t step) {
    WatchJobRequest request;
    request.set_job_id(job_id);
    absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> source =
        coordinator_->WatchJob(request);
    ASSERT_TRUE(source.ok()) << source.status();
    SourceReader<JobEvent> reader(*std::move(source));
    while (std::optional<JobEvent> event = reader.Next()) {
      if (event->has_checkpoint() && event->checkpoint().step() == step) return;
      for (const CheckpointInfo& info : event->status().checkpoints()) {
        if (info.step() == step) return;
      }
    }
    ADD_FAILURE() << "job " << job_id << " never saved a checkpoint at step " << step;
  }

  JobStatus AwaitState(const std::string& job_id, JobState state) {
    WatchJobRequest request;
    request.set_job_id(job_id);
    absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> source =
        coordinator_->WatchJob(request);
    EXPECT_TRUE(source.ok()) << source.status();
    SourceReader<JobEvent> reader(*std::move(source));
    JobStatus last;
    while (std::optional<JobEvent> event = reader.Next()) {
      if (!event->has_status()) continue;
      last = event->status();
      if (last.state() == state) return last;
    }
    ADD_FAILURE() << "job " << job_id << " never became " << JobState_Name(state) << "; last "
                  << JobState_Name(last.state()) << ": " << last.reason();
    return last;
  }

  std::string root_;
  PosixEnv env_;
  FakeClock clock_;
  FakePlanner planner_{4096};
  prometheus::Registry registry_;
  CoordinatorMetrics metrics_{registry_};
  FakeShard shards_[2] = {FakeShard(env_, "ps-0.test:2222"), FakeShard(env_, "ps-1.test:2222")};
  CoordinatorOptions options_;
  std::unique_ptr<Coordinator> coordinator_;
};

constexpr char kTrain[] = R"pb(
  name: "t"
  mode: JOB_MODE_TRAIN
  model { logistic_regression {} }
  train_data { synthetic_clicks { num_examples: 4096 } }
  checkpoint { model_dir: "m" every_steps: 100 }
)pb";

TEST_F(JobLifecycleTest, ANanLossFailsTheJobWithoutAFinalCheckpoint) {
  Start();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_PS, 1);
  Caller worker0 = Join(TASK_TYPE_WORKER, 0);
  Join(TASK_TYPE_WORKER, 1);
  const std::string job_id = Submit(absl::StrCat(kTrain, "stop { max_steps: 1000 }"));
  ASSERT_EQ(AwaitAssignment(worker0).job_id(), job_id);
  EXPECT_FALSE(Report(worker0, job_id, 120).stop());  // ckpt-120
  AwaitCheckpoint(job_id, 120);
  ProgressResponse response = Report(worker0, job_id, 10, std::nan(""));
  EXPECT_TRUE(response.stop());
  EXPECT_EQ(response.stop_reason(), STOP_REASON_NAN_LOSS);
  JobStatus status = AwaitState(job_id, JOB_STATE_FAILED);
  EXPECT_EQ(status.stop_reason(), STOP_REASON_NAN_LOSS);
  EXPECT_NE(status.reason().find("loss is NaN at step 130"), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find("learning_rate"), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find("resume from ckpt-120"), std::string::npos) << status.reason();
  EXPECT_FALSE(PathExists(env_, root_ + "/m/ckpt-130").value_or(true));
}

TEST_F(JobLifecycleTest, MaxSecondsEndsAJobWhoseWorkersStalled) {
  options_.runner.stop_drain_timeout = absl::Seconds(5);
  Start();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_PS, 1);
  Caller worker0 = Join(TASK_TYPE_WORKER, 0);
  Join(TASK_TYPE_WORKER, 1);
  const std::string job_id = Submit(absl::StrCat(kTrain, "stop { max_seconds: 60 }"));
  ASSERT_EQ(AwaitAssignment(worker0).job_id(), job_id);
  EXPECT_FALSE(Report(worker0, job_id, 50).stop());
  // No more reports. Time passes; the job stops on time, waits for the
  // silent workers only so long, and saves its final checkpoint.
  absl::Notification ended;
  std::thread watcher([&] {
    AwaitState(job_id, JOB_STATE_SUCCEEDED);
    ended.Notify();
  });
  while (!ended.WaitForNotificationWithTimeout(absl::Milliseconds(5))) {
    clock_.Advance(absl::Seconds(1));
  }
  watcher.join();
  absl::StatusOr<JobStatus> status = coordinator_->GetJob(job_id);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->stop_reason(), STOP_REASON_MAX_SECONDS);
  EXPECT_TRUE(PathExists(env_, root_ + "/m/ckpt-50/MANIFEST").value_or(false));
}

// One epoch of 4096 records, no other stop condition.
constexpr char kOneEpochOf4096[] = R"pb(
  name: "t"
  mode: JOB_MODE_TRAIN
  model { logistic_regression {} }
  train_data {
    synthetic_clicks { num_examples: 4096 }
    epochs: 1
  }
  checkpoint { model_dir: "m" every_steps: 1000 }
)pb";

TEST_F(JobLifecycleTest, TheEndOfTheDataEndsTheJob) {
  // 4096 records in leases of 2048: two leases, one epoch.
  options_.runner.records_per_lease = 2048;
  Start();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_PS, 1);
  Caller worker0 = Join(TASK_TYPE_WORKER, 0);
  Caller worker1 = Join(TASK_TYPE_WORKER, 1);
  const std::string job_id = Submit(kOneEpochOf4096);
  ASSERT_EQ(AwaitAssignment(worker0).job_id(), job_id);
  for (Caller* worker : {&worker0, &worker1}) {
    absl::StatusOr<DataLease> lease = Acquire(*worker, job_id);
    ASSERT_TRUE(lease.ok()) << lease.status();
    Report(*worker, job_id, 16);
    CompleteDataLeaseRequest complete;
    *complete.mutable_task() = worker->task;
    complete.set_incarnation(worker->incarnation);
    complete.set_job_id(job_id);
    complete.set_lease_id(lease->lease_id());
    ASSERT_TRUE(coordinator_->CompleteDataLease(complete).ok());
  }
  // The last report after the data ran out hears the stop; a worker that
  // asks for more data learns it from the lease, then reports what it
  // trained since its last report and hears the stop there. The final
  // checkpoint waits for that report, so it holds every applied step.
  EXPECT_TRUE(Report(worker0, job_id, 0).stop());
  absl::StatusOr<DataLease> last = Acquire(worker1, job_id);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(last->end_of_data());
  EXPECT_TRUE(Report(worker1, job_id, 0).stop());
  JobStatus status = AwaitState(job_id, JOB_STATE_SUCCEEDED);
  EXPECT_EQ(status.stop_reason(), STOP_REASON_END_OF_DATA);
  EXPECT_TRUE(PathExists(env_, root_ + "/m/ckpt-32/MANIFEST").value_or(false));
}

// Two shards, two workers, a job of 4096 records in leases of 2048.
// worker/0 holds the first lease; ps/0 applied its pushes of records
// [0, 256), ps/1 one push more, [0, 384): a push in flight reached one
// shard only.
struct HalfPushedLease {
  Caller holder;
  Caller other;
  std::string job_id;
  int64_t lease_id = 0;
};

PushLedger LedgerOf(int64_t lease_id, int64_t begin, int64_t end) {
  PushLedger ledger;
  LeaseProgress* lease = ledger.add_leases();
  lease->set_lease_id(lease_id);
  RecordSpan* applied = lease->add_applied();
  applied->set_begin(begin);
  applied->set_end(end);
  return ledger;
}

class LeaseHandbackTest : public JobLifecycleTest {
 protected:
  void StartWithAHalfPushedLease(HalfPushedLease* out) {
    options_.runner.records_per_lease = 2048;
    Start();
    Join(TASK_TYPE_PS, 0);
    Join(TASK_TYPE_PS, 1);
    out->holder = Join(TASK_TYPE_WORKER, 0);
    out->other = Join(TASK_TYPE_WORKER, 1);
    out->job_id = Submit(kOneEpochOf4096);
    ASSERT_EQ(AwaitAssignment(out->holder).job_id(), out->job_id);
    absl::StatusOr<DataLease> lease = Acquire(out->holder, out->job_id);
    ASSERT_TRUE(lease.ok()) << lease.status();
    ASSERT_EQ(lease->range().begin(), 0);
    out->lease_id = lease->lease_id();
    shards_[0].SetLedger(LedgerOf(out->lease_id, 0, 256));
    shards_[1].SetLedger(LedgerOf(out->lease_id, 0, 384));
  }

  // Each shard's push ledger was read once for the lease, and sealed, so no
  // late push of it can land after; then only the untrained rest, [384,
  // 2048), goes back, first in line.
  void ExpectOnlyTheUntrainedRestGoesBack(const HalfPushedLease& lease) {
    for (FakeShard& shard : shards_) {
      const std::vector<ReadPushLedgerRequest> reads = shard.ledger_reads();
      ASSERT_EQ(reads.size(), 1u);
      EXPECT_EQ(reads[0].job_id(), lease.job_id);
      EXPECT_TRUE(reads[0].seal());
      EXPECT_THAT(reads[0].lease_ids(), ::testing::ElementsAre(lease.lease_id));
    }
    absl::StatusOr<DataLease> rest = Acquire(lease.other, lease.job_id);
    ASSERT_TRUE(rest.ok()) << rest.status();
    EXPECT_EQ(rest->range().begin(), 384);
    EXPECT_EQ(rest->range().end(), 2048);
    absl::StatusOr<DataLease> next = Acquire(lease.other, lease.job_id);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->range().begin(), 2048);
  }
};

TEST_F(LeaseHandbackTest, ALostWorkersLeaseGoesBackWithoutTheRecordsItsPushesTrained) {
  HalfPushedLease lease;
  ASSERT_NO_FATAL_FAILURE(StartWithAHalfPushedLease(&lease));
  // worker/0 restarts: its old incarnation's lease is handed back.
  RegisterRequest again;
  *again.mutable_task() = lease.holder.task;
  again.set_incarnation(lease.holder.incarnation + 1);
  ASSERT_TRUE(coordinator_->Register(again).ok());
  ExpectOnlyTheUntrainedRestGoesBack(lease);
}

TEST_F(LeaseHandbackTest, ALeaseWithAPushOfUnknownOutcomeGoesBackWithoutWhatTheShardsApplied) {
  HalfPushedLease lease;
  ASSERT_NO_FATAL_FAILURE(StartWithAHalfPushedLease(&lease));
  // The push of records [256, 384) ended without an answer. The worker, not
  // knowing ps/1 applied it, hands [256, 2048) back: the shards' word counts,
  // not the worker's.
  CompleteDataLeaseRequest complete;
  *complete.mutable_task() = lease.holder.task;
  complete.set_incarnation(lease.holder.incarnation);
  complete.set_job_id(lease.job_id);
  complete.set_lease_id(lease.lease_id);
  RecordRange* returned = complete.add_returned();
  returned->set_begin(256);
  returned->set_end(2048);
  complete.set_outcome_unknown(true);
  ASSERT_TRUE(coordinator_->CompleteDataLease(complete).ok());
  ExpectOnlyTheUntrainedRestGoesBack(lease);
}

TEST_F(JobLifecycleTest, AnEvalJobEvaluatesTheNewestCheckpointOfItsModelDir) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/trained", 100, 2).ok());
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/trained", 200, 2).ok());
  Start();
  Caller evaluator = Join(TASK_TYPE_EVALUATOR, 0);  // no ps or workers needed
  const std::string job_id = Submit(R"pb(
    name: "ev"
    mode: JOB_MODE_EVAL
    model { logistic_regression {} }
    eval_data { synthetic_clicks { num_examples: 100 } }
    checkpoint { model_dir: "trained" }
  )pb");
  ASSERT_EQ(AwaitAssignment(evaluator).job_id(), job_id);
  WatchCheckpointsRequest watch;
  *watch.mutable_task() = evaluator.task;
  watch.set_incarnation(evaluator.incarnation);
  watch.set_job_id(job_id);
  absl::StatusOr<std::shared_ptr<StreamSource<CheckpointNotification>>> source =
      coordinator_->WatchCheckpoints(watch);
  ASSERT_TRUE(source.ok()) << source.status();
  SourceReader<CheckpointNotification> reader(*std::move(source));
  std::optional<CheckpointNotification> notification = reader.Next();
  ASSERT_TRUE(notification.has_value());
  EXPECT_EQ(notification->checkpoint().step(), 200);
  EXPECT_TRUE(notification->checkpoint().final());

  EvalReport report;
  *report.mutable_task() = evaluator.task;
  report.set_incarnation(evaluator.incarnation);
  report.set_job_id(job_id);
  report.set_checkpoint_step(200);
  (*report.mutable_metrics())["loss"] = 0.25;
  ASSERT_TRUE(coordinator_->ReportEval(report).ok());
  JobStatus status = AwaitState(job_id, JOB_STATE_SUCCEEDED);
  EXPECT_NE(status.reason().find("ckpt-200"), std::string::npos) << status.reason();
  EXPECT_EQ(status.last_eval_step(), 200);
  EXPECT_FALSE(reader.Next().has_value());  // the stream ended with the job
  // Nothing of the evaluated model_dir was deleted.
  EXPECT_TRUE(PathExists(env_, root_ + "/trained/ckpt-100").value_or(false));
}

TEST_F(JobLifecycleTest, ContinuousEvalEndsWithTheFinalCheckpointsEvaluation) {
  Start();
  Caller evaluator = Join(TASK_TYPE_EVALUATOR, 0);
  options_.runner.model_dir_poll = absl::Seconds(10);
  const std::string job_id = Submit(R"pb(
    name: "ce"
    mode: JOB_MODE_CONTINUOUS_EVAL
    model { logistic_regression {} }
    eval_data { synthetic_clicks { num_examples: 100 } }
    checkpoint { model_dir: "elsewhere" }
  )pb");
  ASSERT_EQ(AwaitAssignment(evaluator).job_id(), job_id);
  // Checkpoints appear in the model_dir from some other trainer.
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/elsewhere", 100, 1).ok());
  EvalReport report;
  *report.mutable_task() = evaluator.task;
  report.set_incarnation(evaluator.incarnation);
  report.set_job_id(job_id);
  report.set_checkpoint_step(100);
  (*report.mutable_metrics())["loss"] = 0.9;
  ASSERT_TRUE(coordinator_->ReportEval(report).ok());
  EXPECT_EQ(coordinator_->GetJob(job_id)->state(), JOB_STATE_RUNNING);
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/elsewhere", 200, 1, /*final=*/true).ok());
  report.set_checkpoint_step(200);
  report.set_final(true);
  ASSERT_TRUE(coordinator_->ReportEval(report).ok());
  JobStatus status = AwaitState(job_id, JOB_STATE_SUCCEEDED);
  EXPECT_NE(status.reason().find("ckpt-200"), std::string::npos) << status.reason();
}

TEST_F(JobLifecycleTest, AnEvaluatorThatCannotEvaluateFailsTheJob) {
  Start();
  Caller evaluator = Join(TASK_TYPE_EVALUATOR, 0);
  const std::string job_id = Submit(R"pb(
    name: "ce"
    mode: JOB_MODE_CONTINUOUS_EVAL
    model { logistic_regression {} }
    eval_data { synthetic_clicks { num_examples: 100 } }
    checkpoint { model_dir: "elsewhere" }
  )pb");
  ASSERT_EQ(AwaitAssignment(evaluator).job_id(), job_id);
  EvalReport report;
  *report.mutable_task() = evaluator.task;
  report.set_incarnation(evaluator.incarnation);
  report.set_job_id(job_id);
  report.set_status(EVAL_STATUS_FAILED);
  report.set_reason("eval_data: no such file");
  ASSERT_TRUE(coordinator_->ReportEval(report).ok());
  JobStatus status = AwaitState(job_id, JOB_STATE_FAILED);
  EXPECT_NE(status.reason().find("evaluator/0 cannot evaluate the job: eval_data: no such file"),
            std::string::npos)
      << status.reason();
}

TEST_F(JobLifecycleTest, ResumingSkipsADamagedCheckpoint) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/m", 100, 2).ok());
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/m", 200, 2).ok());
  ASSERT_TRUE(FlipBit(env_, root_ + "/m/ckpt-200/" + ShardFileName(1, 2), 10).ok());
  Start();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_PS, 1);
  Caller worker0 = Join(TASK_TYPE_WORKER, 0);
  Join(TASK_TYPE_WORKER, 1);
  const std::string job_id = Submit(absl::StrCat(kTrain, "stop { max_steps: 1000 }"));
  Assignment assignment = AwaitAssignment(worker0);
  ASSERT_EQ(assignment.job_id(), job_id);
  EXPECT_EQ(assignment.global_step(), 100);
  EXPECT_EQ(assignment.restore_checkpoint(), root_ + "/m/ckpt-100");
  ASSERT_EQ(shards_[1].restored().size(), 1u);
  EXPECT_EQ(shards_[1].restored()[0].path(), root_ + "/m/ckpt-100/" + ShardFileName(1, 2));
  EXPECT_EQ(Report(worker0, job_id, 5).global_step(), 105);
  // The damaged one is kept aside, out of the way of step 200.
  EXPECT_TRUE(PathExists(env_, root_ + "/m/ckpt-200.damaged").value_or(false));
  EXPECT_EQ(Report(worker0, job_id, 95).global_step(), 200);
  AwaitCheckpoint(job_id, 200);
  EXPECT_TRUE(PathExists(env_, root_ + "/m/ckpt-200/MANIFEST").value_or(false));
}

TEST_F(JobLifecycleTest, AWarmStartRestoresVariablesButStartsAtStepZero) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/other", 500, 2).ok());
  Start();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_PS, 1);
  Caller worker0 = Join(TASK_TYPE_WORKER, 0);
  Join(TASK_TYPE_WORKER, 1);
  const std::string job_id =
      Submit(absl::StrCat(R"pb(
                            name: "t"
                            mode: JOB_MODE_TRAIN
                            model { logistic_regression {} }
                            train_data { synthetic_clicks { num_examples: 4096 } }
                            stop { max_steps: 1000 }
                            checkpoint { model_dir: "fresh" warm_start_from: ")pb",
                          root_, "/other/ckpt-500\" }"));
  Assignment assignment = AwaitAssignment(worker0);
  ASSERT_EQ(assignment.job_id(), job_id);
  EXPECT_EQ(assignment.global_step(), 0);
  ASSERT_EQ(shards_[0].restored().size(), 1u);
  EXPECT_EQ(shards_[0].restored()[0].path(), root_ + "/other/ckpt-500/" + ShardFileName(0, 2));
  EXPECT_EQ(Report(worker0, job_id, 5).global_step(), 5);
}

TEST_F(JobLifecycleTest, AFinalEvaluationThatNeverComesFailsTheJobInTime) {
  options_.runner.final_eval_timeout = absl::Minutes(5);
  Start();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_PS, 1);
  Caller worker0 = Join(TASK_TYPE_WORKER, 0);
  Caller worker1 = Join(TASK_TYPE_WORKER, 1);
  Join(TASK_TYPE_EVALUATOR, 0);
  const std::string job_id = Submit(R"pb(
    name: "e"
    mode: JOB_MODE_TRAIN_AND_EVAL
    model { logistic_regression {} }
    train_data { synthetic_clicks { num_examples: 4096 } }
    eval_data { synthetic_clicks { num_examples: 100 } }
    stop { max_steps: 10 }
    checkpoint { model_dir: "m" every_steps: 100 }
  )pb");
  ASSERT_EQ(AwaitAssignment(worker0).job_id(), job_id);
  EXPECT_TRUE(Report(worker0, job_id, 10).stop());
  EXPECT_TRUE(Report(worker1, job_id, 0).stop());
  absl::Notification ended;
  JobStatus status;
  std::thread watcher([&] {
    status = AwaitState(job_id, JOB_STATE_FAILED);
    ended.Notify();
  });
  while (!ended.WaitForNotificationWithTimeout(absl::Milliseconds(5))) {
    clock_.Advance(absl::Seconds(10));
  }
  watcher.join();
  EXPECT_NE(status.reason().find("reached max_steps 10"), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find("evaluator/0 did not report an evaluation of the final "
                                 "checkpoint ckpt-10 within 5m00s"),
            std::string::npos)
      << status.reason();
}

TEST_F(JobLifecycleTest, StopImmediatelySkipsTheFinalCheckpoint) {
  Start();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_PS, 1);
  Caller worker0 = Join(TASK_TYPE_WORKER, 0);
  Join(TASK_TYPE_WORKER, 1);
  const std::string job_id = Submit(absl::StrCat(kTrain, "stop { max_steps: 1000 }"));
  ASSERT_EQ(AwaitAssignment(worker0).job_id(), job_id);
  Report(worker0, job_id, 7);
  StopJobRequest stop;
  stop.set_job_id(job_id);
  stop.set_immediately(true);
  ASSERT_TRUE(coordinator_->StopJob(stop).ok());
  JobStatus status = AwaitState(job_id, JOB_STATE_STOPPED);
  EXPECT_EQ(status.checkpoints_size(), 0);
  EXPECT_NE(status.reason().find("no checkpoint was saved"), std::string::npos) << status.reason();
  EXPECT_EQ(shards_[0].snapshots(), 0);
}

TEST_F(JobLifecycleTest, MetricsFollowTheJob) {
  Start();
  Join(TASK_TYPE_PS, 0);
  Join(TASK_TYPE_PS, 1);
  Caller worker0 = Join(TASK_TYPE_WORKER, 0);
  Join(TASK_TYPE_WORKER, 1);
  const std::string job_id = Submit(absl::StrCat(kTrain, "stop { max_steps: 1000 }"));
  ASSERT_EQ(AwaitAssignment(worker0).job_id(), job_id);
  Report(worker0, job_id, 150);  // ckpt-150
  AwaitCheckpoint(job_id, 150);
  // The gauges are set by the coordinator's ticker, which offers nothing to
  // wait on: tick until they show the job. The job counts are set last in a
  // tick; once they are, so are that tick's other gauges.
  std::map<std::string, double> values;
  for (absl::Time give_up = absl::Now() + kTimeout; absl::Now() < give_up;) {
    clock_.Advance(options_.tick);
    values.clear();
    for (const prometheus::MetricFamily& family : registry_.Collect()) {
      for (const prometheus::ClientMetric& metric : family.metric) {
        std::string name = family.name;
        for (const prometheus::ClientMetric::Label& label : metric.label) {
          absl::StrAppend(&name, "{", label.name, "=", label.value, "}");
        }
        values[name] = family.type == prometheus::MetricType::Counter ? metric.counter.value
                                                                      : metric.gauge.value;
      }
    }
    if (values["pstrain_coordinator_global_step"] == 150 &&
        values["pstrain_coordinator_checkpoints_total{result=ok}"] == 1 &&
        values["pstrain_coordinator_jobs{state=running}"] == 1) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(values["pstrain_coordinator_global_step"], 150);
  EXPECT_EQ(values["pstrain_coordinator_checkpoints_total{result=ok}"], 1);
  EXPECT_EQ(values["pstrain_coordinator_members{role=ps}{state=busy}"], 2);
  EXPECT_EQ(values["pstrain_coordinator_jobs{state=running}"], 1);
  EXPECT_EQ(values["pstrain_coordinator_queued_jobs"], 0);
  EXPECT_EQ(values["pstrain_coordinator_heartbeat_age_seconds{task=worker/0}"] >= 0, true);
}

}  // namespace
}  // namespace coordinator
}  // namespace pstrain
