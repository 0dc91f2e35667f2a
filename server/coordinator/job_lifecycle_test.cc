// The job lifecycle through the Coordinator's own calls (the in-process
// coordinator, not its gRPC services): how each stop condition ends a job,
// evaluation-only jobs, resuming past a damaged checkpoint, warm starts,
// and the metrics. Parameter servers are in-memory fakes; time is a
// FakeClock.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/env.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/coordinator/coordinator.h"
#include "server/coordinator/testing/fake_shard.h"
#include "server/coordinator/testing/in_process_coordinator.h"
#include "server/coordinator/testing/source_reader.h"

namespace pstrain {
namespace coordinator {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(30);

struct Caller {
  TaskId task;
  uint64_t incarnation = 1;
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

  // Starts the coordinator with options_: two FakeShards, jobs of 4096
  // records.
  void Start() {
    InProcessCoordinator::Fakes fakes;
    fakes.num_records = 4096;
    coordinator_ = std::make_unique<InProcessCoordinator>(options_, std::move(fakes));
  }

  Coordinator& coordinator() { return coordinator_->coordinator(); }
  FakeShard& shard(int index) { return coordinator_->shard(index); }

  // Starts the coordinator; ps/0, ps/1, worker0_ and worker1_ join, and
  // `spec` is submitted and handed to worker0_ (assignment_).
  void StartTraining(const std::string& spec) {
    Start();
    ASSERT_NO_FATAL_FAILURE(JoinTrainers());
    ASSERT_NO_FATAL_FAILURE(SubmitAndAwait(spec, worker0_));
  }

  // Starts the coordinator; evaluator_ joins (no parameter servers or
  // workers), and `spec` is submitted and handed to it.
  void StartEvaluation(const std::string& spec) {
    Start();
    evaluator_ = Join(TASK_TYPE_EVALUATOR, 0);
    ASSERT_NO_FATAL_FAILURE(SubmitAndAwait(spec, evaluator_));
  }

  // ps/0, ps/1, worker0_ and worker1_ join the started coordinator.
  void JoinTrainers() {
    ASSERT_TRUE(coordinator_->RegisterShards().ok());
    worker0_ = Join(TASK_TYPE_WORKER, 0);
    worker1_ = Join(TASK_TYPE_WORKER, 1);
  }

  Caller Join(TaskType type, int index) {
    Caller caller = Task(type, index);
    RegisterRequest request;
    *request.mutable_task() = caller.task;
    request.set_incarnation(caller.incarnation);
    EXPECT_TRUE(coordinator().Register(request).ok());
    return caller;
  }

  // Submits `spec` (job_id_) and waits (real time) until its assignment
  // reaches `member` (assignment_).
  void SubmitAndAwait(const std::string& spec, const Caller& member) {
    SubmitJobRequest request;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(spec, request.mutable_spec()));
    absl::StatusOr<SubmitJobResponse> response = coordinator().SubmitJob(request);
    ASSERT_TRUE(response.ok()) << response.status();
    job_id_ = response->job_id();
    absl::StatusOr<Assignment> assignment =
        coordinator_->AwaitBoardAssignment(member.task, kTimeout);
    ASSERT_TRUE(assignment.ok()) << assignment.status();
    assignment_ = *std::move(assignment);
    ASSERT_EQ(assignment_.job_id(), job_id_);
  }

  absl::StatusOr<DataLease> Acquire(const Caller& worker) {
    AcquireDataLeaseRequest request;
    *request.mutable_task() = worker.task;
    request.set_incarnation(worker.incarnation);
    request.set_job_id(job_id_);
    return coordinator().AcquireDataLease(request);
  }

  // `worker`'s report of `updates` more applied updates on job_id_: the
  // shards' answers showed it the job's global step that many updates on.
  ProgressResponse Report(Caller& worker, int64_t updates, double loss = 0.5) {
    absl::StatusOr<JobStatus> status = coordinator().GetJob(job_id_);
    EXPECT_TRUE(status.ok()) << status.status();
    ProgressReport report;
    *report.mutable_task() = worker.task;
    report.set_incarnation(worker.incarnation);
    report.set_job_id(job_id_);
    report.set_steps(updates > 0 ? updates : 0);
    report.set_parameter_version(status.value_or(JobStatus()).global_step() + updates);
    report.set_loss(loss);
    absl::StatusOr<ProgressResponse> response = coordinator().ReportProgress(report);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.value_or(ProgressResponse());
  }

  // An EvalReport of evaluator_ on job_id_, for the test to fill.
  EvalReport EvaluatorReport() const {
    EvalReport report;
    *report.mutable_task() = evaluator_.task;
    report.set_incarnation(evaluator_.incarnation);
    report.set_job_id(job_id_);
    return report;
  }

  // The events of job_id_, read from the start.
  std::unique_ptr<SourceReader<JobEvent>> Watch() {
    WatchJobRequest request;
    request.set_job_id(job_id_);
    absl::StatusOr<std::shared_ptr<StreamSource<JobEvent>>> source =
        coordinator().WatchJob(request);
    EXPECT_TRUE(source.ok()) << source.status();
    if (!source.ok()) return nullptr;
    return std::make_unique<SourceReader<JobEvent>>(*std::move(source));
  }

  // Waits until the job's status lists the checkpoint of `step`.
  void AwaitCheckpoint(int64_t step) {
    std::unique_ptr<SourceReader<JobEvent>> reader = Watch();
    ASSERT_NE(reader, nullptr);
    while (std::optional<JobEvent> event = reader->Next()) {
      if (event->has_checkpoint() && event->checkpoint().step() == step) return;
      for (const CheckpointInfo& info : event->status().checkpoints()) {
        if (info.step() == step) return;
      }
    }
    ADD_FAILURE() << "job " << job_id_ << " never saved a checkpoint at step " << step;
  }

  JobStatus AwaitState(JobState state) {
    std::unique_ptr<SourceReader<JobEvent>> reader = Watch();
    JobStatus last;
    while (reader != nullptr) {
      std::optional<JobEvent> event = reader->Next();
      if (!event.has_value()) break;
      if (!event->has_status()) continue;
      last = event->status();
      if (last.state() == state) return last;
    }
    ADD_FAILURE() << "job " << job_id_ << " never became " << JobState_Name(state) << "; last "
                  << JobState_Name(last.state()) << ": " << last.reason();
    return last;
  }

  // Advances the coordinator's clock by `step` at a time until job_id_
  // is in `state`; its status then.
  JobStatus AdvanceClockUntil(JobState state, absl::Duration step) {
    absl::Notification ended;
    JobStatus status;
    std::thread watcher([&] {
      status = AwaitState(state);
      ended.Notify();
    });
    while (!ended.WaitForNotificationWithTimeout(absl::Milliseconds(5))) {
      coordinator_->clock().Advance(step);
    }
    watcher.join();
    return status;
  }

  std::string root_;
  PosixEnv env_;
  CoordinatorOptions options_;
  std::unique_ptr<InProcessCoordinator> coordinator_;
  Caller worker0_;
  Caller worker1_;
  Caller evaluator_;
  std::string job_id_;
  Assignment assignment_;
};

constexpr char kTrain[] = R"pb(
  name: "t"
  mode: JOB_MODE_TRAIN
  model { logistic_regression {} }
  train_data { synthetic_clicks { num_examples: 4096 } }
  checkpoint { model_dir: "m" every_steps: 100 }
)pb";

TEST_F(JobLifecycleTest, ANanLossFailsTheJobWithoutAFinalCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(StartTraining(absl::StrCat(kTrain, "stop { max_steps: 1000 }")));
  EXPECT_FALSE(Report(worker0_, 120).stop());  // ckpt-120
  AwaitCheckpoint(120);
  ProgressResponse response = Report(worker0_, 10, std::nan(""));
  EXPECT_TRUE(response.stop());
  EXPECT_EQ(response.stop_reason(), STOP_REASON_NAN_LOSS);
  JobStatus status = AwaitState(JOB_STATE_FAILED);
  EXPECT_EQ(status.stop_reason(), STOP_REASON_NAN_LOSS);
  EXPECT_NE(status.reason().find("loss is NaN at step 130"), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find("learning_rate"), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find("resume from ckpt-120"), std::string::npos) << status.reason();
  EXPECT_FALSE(PathExists(env_, root_ + "/m/ckpt-130").value_or(true));
}

TEST_F(JobLifecycleTest, MaxSecondsEndsAJobWhoseWorkersStalled) {
  options_.runner.stop_drain_timeout = absl::Seconds(5);
  ASSERT_NO_FATAL_FAILURE(StartTraining(absl::StrCat(kTrain, "stop { max_seconds: 60 }")));
  EXPECT_FALSE(Report(worker0_, 50).stop());
  // No more reports. Time passes; the job stops on time, waits for the
  // silent workers only so long, and saves its final checkpoint.
  AdvanceClockUntil(JOB_STATE_SUCCEEDED, absl::Seconds(1));
  absl::StatusOr<JobStatus> status = coordinator().GetJob(job_id_);
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
  ASSERT_NO_FATAL_FAILURE(StartTraining(kOneEpochOf4096));
  for (Caller* worker : {&worker0_, &worker1_}) {
    absl::StatusOr<DataLease> lease = Acquire(*worker);
    ASSERT_TRUE(lease.ok()) << lease.status();
    Report(*worker, 16);
    CompleteDataLeaseRequest complete;
    *complete.mutable_task() = worker->task;
    complete.set_incarnation(worker->incarnation);
    complete.set_job_id(job_id_);
    complete.set_lease_id(lease->lease_id());
    ASSERT_TRUE(coordinator().CompleteDataLease(complete).ok());
  }
  // The last report after the data ran out hears the stop; a worker that
  // asks for more data learns it from the lease, then reports what it
  // trained since its last report and hears the stop there. The final
  // checkpoint waits for that report, so it holds every applied step.
  EXPECT_TRUE(Report(worker0_, 0).stop());
  absl::StatusOr<DataLease> last = Acquire(worker1_);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(last->end_of_data());
  EXPECT_TRUE(Report(worker1_, 0).stop());
  JobStatus status = AwaitState(JOB_STATE_SUCCEEDED);
  EXPECT_EQ(status.stop_reason(), STOP_REASON_END_OF_DATA);
  EXPECT_TRUE(PathExists(env_, root_ + "/m/ckpt-32/MANIFEST").value_or(false));
}

PushLedger LedgerOf(int64_t lease_id, int64_t begin, int64_t end) {
  PushLedger ledger;
  LeaseProgress* lease = ledger.add_leases();
  lease->set_lease_id(lease_id);
  RecordSpan* applied = lease->add_applied();
  applied->set_begin(begin);
  applied->set_end(end);
  return ledger;
}

// Two shards, two workers, a job of 4096 records in leases of 2048.
// worker/0 holds the first lease (lease_id_); ps/0 applied its pushes of
// records [0, 256), ps/1 one push more, [0, 384): a push in flight reached
// one shard only.
class LeaseHandbackTest : public JobLifecycleTest {
 protected:
  void StartWithAHalfPushedLease() {
    options_.runner.records_per_lease = 2048;
    ASSERT_NO_FATAL_FAILURE(StartTraining(kOneEpochOf4096));
    absl::StatusOr<DataLease> lease = Acquire(worker0_);
    ASSERT_TRUE(lease.ok()) << lease.status();
    ASSERT_EQ(lease->range().begin(), 0);
    lease_id_ = lease->lease_id();
    shard(0).SetLedger(LedgerOf(lease_id_, 0, 256));
    shard(1).SetLedger(LedgerOf(lease_id_, 0, 384));
  }

  // Each shard's push ledger was read once for the lease, and sealed, so no
  // late push of it can land after; then only the untrained rest, [384,
  // 2048), goes back, first in line.
  void ExpectOnlyTheUntrainedRestGoesBack() {
    for (int i = 0; i < 2; ++i) {
      const std::vector<ReadPushLedgerRequest> reads = shard(i).ledger_reads();
      ASSERT_EQ(reads.size(), 1u);
      EXPECT_EQ(reads[0].job_id(), job_id_);
      EXPECT_TRUE(reads[0].seal());
      EXPECT_THAT(reads[0].lease_ids(), ::testing::ElementsAre(lease_id_));
    }
    absl::StatusOr<DataLease> rest = Acquire(worker1_);
    ASSERT_TRUE(rest.ok()) << rest.status();
    EXPECT_EQ(rest->range().begin(), 384);
    EXPECT_EQ(rest->range().end(), 2048);
    absl::StatusOr<DataLease> next = Acquire(worker1_);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->range().begin(), 2048);
  }

  int64_t lease_id_ = 0;
};

TEST_F(LeaseHandbackTest, ALostWorkersLeaseGoesBackWithoutTheRecordsItsPushesTrained) {
  ASSERT_NO_FATAL_FAILURE(StartWithAHalfPushedLease());
  // worker/0 restarts: its old incarnation's lease is handed back.
  RegisterRequest again;
  *again.mutable_task() = worker0_.task;
  again.set_incarnation(worker0_.incarnation + 1);
  ASSERT_TRUE(coordinator().Register(again).ok());
  ExpectOnlyTheUntrainedRestGoesBack();
}

TEST_F(LeaseHandbackTest, ALeaseWithAPushOfUnknownOutcomeGoesBackWithoutWhatTheShardsApplied) {
  ASSERT_NO_FATAL_FAILURE(StartWithAHalfPushedLease());
  // The push of records [256, 384) ended without an answer. The worker, not
  // knowing ps/1 applied it, hands [256, 2048) back: the shards' word counts,
  // not the worker's.
  CompleteDataLeaseRequest complete;
  *complete.mutable_task() = worker0_.task;
  complete.set_incarnation(worker0_.incarnation);
  complete.set_job_id(job_id_);
  complete.set_lease_id(lease_id_);
  RecordRange* returned = complete.add_returned();
  returned->set_begin(256);
  returned->set_end(2048);
  complete.set_outcome_unknown(true);
  ASSERT_TRUE(coordinator().CompleteDataLease(complete).ok());
  ExpectOnlyTheUntrainedRestGoesBack();
}

TEST_F(JobLifecycleTest, AnEvalJobEvaluatesTheNewestCheckpointOfItsModelDir) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/trained", 100, 2).ok());
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/trained", 200, 2).ok());
  ASSERT_NO_FATAL_FAILURE(StartEvaluation(R"pb(
    name: "ev"
    mode: JOB_MODE_EVAL
    model { logistic_regression {} }
    eval_data { synthetic_clicks { num_examples: 100 } }
    checkpoint { model_dir: "trained" }
  )pb"));
  WatchCheckpointsRequest watch;
  *watch.mutable_task() = evaluator_.task;
  watch.set_incarnation(evaluator_.incarnation);
  watch.set_job_id(job_id_);
  absl::StatusOr<std::shared_ptr<StreamSource<CheckpointNotification>>> source =
      coordinator().WatchCheckpoints(watch);
  ASSERT_TRUE(source.ok()) << source.status();
  SourceReader<CheckpointNotification> reader(*std::move(source));
  std::optional<CheckpointNotification> notification = reader.Next();
  ASSERT_TRUE(notification.has_value());
  EXPECT_EQ(notification->checkpoint().step(), 200);
  EXPECT_TRUE(notification->checkpoint().final());

  EvalReport report = EvaluatorReport();
  report.set_checkpoint_step(200);
  (*report.mutable_metrics())["loss"] = 0.25;
  ASSERT_TRUE(coordinator().ReportEval(report).ok());
  JobStatus status = AwaitState(JOB_STATE_SUCCEEDED);
  EXPECT_NE(status.reason().find("ckpt-200"), std::string::npos) << status.reason();
  EXPECT_EQ(status.last_eval_step(), 200);
  EXPECT_FALSE(reader.Next().has_value());  // the stream ended with the job
  // Nothing of the evaluated model_dir was deleted.
  EXPECT_TRUE(PathExists(env_, root_ + "/trained/ckpt-100").value_or(false));
}

// A continuous evaluation of a model_dir no job of this coordinator trains.
constexpr char kContinuousEval[] = R"pb(
  name: "ce"
  mode: JOB_MODE_CONTINUOUS_EVAL
  model { logistic_regression {} }
  eval_data { synthetic_clicks { num_examples: 100 } }
  checkpoint { model_dir: "elsewhere" }
)pb";

TEST_F(JobLifecycleTest, ContinuousEvalEndsWithTheFinalCheckpointsEvaluation) {
  ASSERT_NO_FATAL_FAILURE(StartEvaluation(kContinuousEval));
  // Checkpoints appear in the model_dir from some other trainer.
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/elsewhere", 100, 1).ok());
  EvalReport report = EvaluatorReport();
  report.set_checkpoint_step(100);
  (*report.mutable_metrics())["loss"] = 0.9;
  ASSERT_TRUE(coordinator().ReportEval(report).ok());
  EXPECT_EQ(coordinator().GetJob(job_id_)->state(), JOB_STATE_RUNNING);
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/elsewhere", 200, 1, /*final=*/true).ok());
  report.set_checkpoint_step(200);
  report.set_final(true);
  ASSERT_TRUE(coordinator().ReportEval(report).ok());
  JobStatus status = AwaitState(JOB_STATE_SUCCEEDED);
  EXPECT_NE(status.reason().find("ckpt-200"), std::string::npos) << status.reason();
}

TEST_F(JobLifecycleTest, AnEvaluatorThatCannotEvaluateFailsTheJob) {
  ASSERT_NO_FATAL_FAILURE(StartEvaluation(kContinuousEval));
  EvalReport report = EvaluatorReport();
  report.set_status(EVAL_STATUS_FAILED);
  report.set_reason("eval_data: no such file");
  ASSERT_TRUE(coordinator().ReportEval(report).ok());
  JobStatus status = AwaitState(JOB_STATE_FAILED);
  EXPECT_NE(status.reason().find("evaluator/0 cannot evaluate the job: eval_data: no such file"),
            std::string::npos)
      << status.reason();
}

TEST_F(JobLifecycleTest, ResumingSkipsADamagedCheckpoint) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/m", 100, 2).ok());
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/m", 200, 2).ok());
  ASSERT_TRUE(FlipBit(env_, root_ + "/m/ckpt-200/" + ShardFileName(1, 2), 10).ok());
  ASSERT_NO_FATAL_FAILURE(StartTraining(absl::StrCat(kTrain, "stop { max_steps: 1000 }")));
  EXPECT_EQ(assignment_.global_step(), 100);
  EXPECT_EQ(assignment_.restore_checkpoint(), root_ + "/m/ckpt-100");
  ASSERT_EQ(shard(1).restored().size(), 1u);
  EXPECT_EQ(shard(1).restored()[0].path(), root_ + "/m/ckpt-100/" + ShardFileName(1, 2));
  EXPECT_EQ(Report(worker0_, 5).global_step(), 105);
  // The damaged one is kept aside, out of the way of step 200.
  EXPECT_TRUE(PathExists(env_, root_ + "/m/ckpt-200.damaged").value_or(false));
  EXPECT_EQ(Report(worker0_, 95).global_step(), 200);
  AwaitCheckpoint(200);
  EXPECT_TRUE(PathExists(env_, root_ + "/m/ckpt-200/MANIFEST").value_or(false));
}

TEST_F(JobLifecycleTest, AWarmStartRestoresVariablesButStartsAtStepZero) {
  ASSERT_TRUE(WriteTestCheckpoint(env_, root_ + "/other", 500, 2).ok());
  ASSERT_NO_FATAL_FAILURE(
      StartTraining(absl::StrCat(R"pb(
                                   name: "t"
                                   mode: JOB_MODE_TRAIN
                                   model { logistic_regression {} }
                                   train_data { synthetic_clicks { num_examples: 4096 } }
                                   stop { max_steps: 1000 }
                                   checkpoint { model_dir: "fresh" warm_start_from: ")pb",
                                 root_, "/other/ckpt-500\" }")));
  EXPECT_EQ(assignment_.global_step(), 0);
  ASSERT_EQ(shard(0).restored().size(), 1u);
  EXPECT_EQ(shard(0).restored()[0].path(), root_ + "/other/ckpt-500/" + ShardFileName(0, 2));
  EXPECT_EQ(Report(worker0_, 5).global_step(), 5);
}

TEST_F(JobLifecycleTest, AFinalEvaluationThatNeverComesFailsTheJobInTime) {
  options_.runner.final_eval_timeout = absl::Minutes(5);
  Start();
  ASSERT_NO_FATAL_FAILURE(JoinTrainers());
  evaluator_ = Join(TASK_TYPE_EVALUATOR, 0);
  ASSERT_NO_FATAL_FAILURE(SubmitAndAwait(R"pb(
                                           name: "e"
                                           mode: JOB_MODE_TRAIN_AND_EVAL
                                           model { logistic_regression {} }
                                           train_data { synthetic_clicks { num_examples: 4096 } }
                                           eval_data { synthetic_clicks { num_examples: 100 } }
                                           stop { max_steps: 10 }
                                           checkpoint { model_dir: "m" every_steps: 100 }
                                         )pb",
                                         worker0_));
  EXPECT_TRUE(Report(worker0_, 10).stop());
  EXPECT_TRUE(Report(worker1_, 0).stop());
  const JobStatus status = AdvanceClockUntil(JOB_STATE_FAILED, absl::Seconds(10));
  EXPECT_NE(status.reason().find("reached max_steps 10"), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find("evaluator/0 did not report an evaluation of the final "
                                 "checkpoint ckpt-10 within 5m00s"),
            std::string::npos)
      << status.reason();
}

TEST_F(JobLifecycleTest, StopImmediatelySkipsTheFinalCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(StartTraining(absl::StrCat(kTrain, "stop { max_steps: 1000 }")));
  Report(worker0_, 7);
  StopJobRequest stop;
  stop.set_job_id(job_id_);
  stop.set_immediately(true);
  ASSERT_TRUE(coordinator().StopJob(stop).ok());
  JobStatus status = AwaitState(JOB_STATE_STOPPED);
  EXPECT_EQ(status.checkpoints_size(), 0);
  EXPECT_NE(status.reason().find("no checkpoint was saved"), std::string::npos) << status.reason();
  EXPECT_EQ(shard(0).snapshots(), 0);
}

TEST_F(JobLifecycleTest, MetricsFollowTheJob) {
  ASSERT_NO_FATAL_FAILURE(StartTraining(absl::StrCat(kTrain, "stop { max_steps: 1000 }")));
  Report(worker0_, 150);  // ckpt-150
  AwaitCheckpoint(150);
  // The gauges are set by the coordinator's ticker, which offers nothing to
  // wait on: tick until they show the job. The job counts are set last in a
  // tick; once they are, so are that tick's other gauges.
  std::map<std::string, double> values;
  for (absl::Time give_up = absl::Now() + kTimeout; absl::Now() < give_up;) {
    coordinator_->clock().Advance(options_.tick);
    values.clear();
    for (const prometheus::MetricFamily& family : coordinator_->registry().Collect()) {
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
