// The evaluation loop against the real coordinator, served in this process
// (InProcessCoordinator): the test submits the job and plays its parameter
// servers' and worker's part, and the coordinator announces each checkpoint
// it saves as it would in a cluster. The evaluator's own clock is a
// FakeClock, so schedules and heartbeats move only when a test says; what
// the evaluator reports is read from its channel (CoordinatorCallLog).

#include "evaluator/evaluation_loop.h"

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/checkpoint/whole_file.h"
#include "common/clock/fake_clock.h"
#include "common/config/job_mode.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/test_files.h"
#include "common/export/export_versions.h"
#include "common/export/exported_model.h"
#include "common/export/testing/parameters_checkpoint.h"
#include "common/summary/file_summary_writer.h"
#include "common/summary/scalar_jsonl.h"
#include "common/training/local_trainer.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "protos/coordinator.grpc.pb.h"
#include "server/coordinator/testing/coordinator_call_log.h"
#include "server/coordinator/testing/in_process_coordinator.h"
#include "server/coordinator/testing/source_reader.h"

namespace pstrain {
namespace evaluator {
namespace {

using coordinator::InProcessCoordinator;
using coordinator::SourceReader;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr absl::Duration kWait = absl::Seconds(60);
// Parameter servers of a training job, and so shard files per checkpoint.
constexpr int kShards = 2;
constexpr int64_t kMaxShardFileBytes = int64_t{64} << 20;

JobSpec ToySpec(const std::string& model_dir, const std::string& extra) {
  const std::string data = testing_util::WriteToyImageDataset(200, 60);
  auto raw = ParseJobSpecText(absl::StrCat(R"(
    model { mlp { hidden_units: [8] } }
    train_data { fashion_mnist { dir: ")",
                                           data, R"(" } batch_size: 20 }
    eval_data { fashion_mnist { dir: ")",
                                           data, R"(" } batch_size: 25 }
    optimizer { adam {} learning_rate: 0.02 }
    training { seed: 11 }
    stop { max_steps: 1000 }
    checkpoint { model_dir: ")",
                                           model_dir, R"(" }
  )",
                                           extra));
  EXPECT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

// Parameters after `steps` steps of single-process training, and what its
// own Evaluate() says of them.
struct Trained {
  std::unique_ptr<ModelParameters> parameters;
  std::map<std::string, double> metrics;
};

Trained Train(JobSpec spec, int64_t steps) {
  LocalTrainerOptions options;
  options.max_steps = steps;
  spec.set_mode(JOB_MODE_TRAIN_AND_EVAL);  // the job that made the checkpoints
  auto trainer = LocalTrainer::Create(spec, options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (steps > 0) {
    EXPECT_TRUE((*trainer)->Run().ok());
  }
  auto parameters =
      ModelParameters::Create((*trainer)->model().Variables(), spec.training().seed());
  EXPECT_TRUE(parameters.ok());
  const VariableStore& store = (*trainer)->variables();
  for (const VariableDef& def : (*parameters)->definitions()) {
    const std::string& name = def.spec.name();
    if (def.spec.kind() == VARIABLE_KIND_EMBEDDING) {
      // The rows training created; the others read as initial values.
      EmbeddingTableValues* table = (*parameters)->mutable_table(name);
      for (int64_t id = 0; id < table->vocabulary(); ++id) {
        absl::StatusOr<std::vector<float>> row = store.Row(name, id);
        if (!row.ok()) continue;
        row->resize(table->dim());
        EXPECT_TRUE(table->Set(id, *row).ok());
      }
      continue;
    }
    const Tensor* value = store.dense(name);
    std::memcpy((*parameters)->mutable_dense(name)->raw_data(), value->raw_data(),
                value->num_bytes());
  }
  // After the copy: evaluating creates rows for the ids it reads.
  auto evaluation = (*trainer)->Evaluate();
  EXPECT_TRUE(evaluation.ok()) << evaluation.status();
  return {std::move(parameters).value(), evaluation->metrics};
}

double CounterValue(prometheus::Registry& registry, const std::string& name,
                    const std::string& label, const std::string& value) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      for (const prometheus::ClientMetric::Label& l : metric.label) {
        if (l.name == label && l.value == value) return metric.counter.value;
      }
    }
  }
  return -1;
}

class EvaluationLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string root = NewTestDir(env_);
    model_dir_ = JoinPath(root, "model");
    staged_dir_ = JoinPath(root, "staged");
    coordinator::CoordinatorOptions options;
    options.checkpoint_root = root;
    options.runner.num_ps = kShards;
    options.runner.num_workers = 1;
    coordinator_ = std::make_unique<InProcessCoordinator>(options, kShards);
    // Each parameter server saves its part of the parameters staged for the
    // step (Stage).
    for (int i = 0; i < kShards; ++i) {
      coordinator_->shard(i).SetSnapshotContents([this](const SnapshotRequest& request) {
        return ReadWholeFile(
            env_,
            JoinPath(CheckpointDir(staged_dir_, request.global_step()), Basename(request.path())),
            kMaxShardFileBytes);
      });
    }
    worker_.set_type(TASK_TYPE_WORKER);
    worker_.set_index(0);
  }

  void TearDown() override {
    if (loop_ != nullptr) loop_->Stop();
  }

  // Submits `spec` (a training job gets its parameter servers and worker
  // registered) and starts the evaluator, which registers and takes it up.
  void StartLoop(const JobSpec& spec, EvaluationLoopOptions options = {}) {
    SubmitJobRequest submit;
    *submit.mutable_spec() = spec;
    absl::StatusOr<SubmitJobResponse> submitted = coordinator_->coordinator().SubmitJob(submit);
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    job_id_ = submitted->job_id();
    if (JobModeTrains(submitted->status().spec().mode())) {
      ASSERT_TRUE(coordinator_->RegisterShards().ok());
      RegisterRequest worker;
      *worker.mutable_task() = worker_;
      worker.set_incarnation(1);
      ASSERT_TRUE(coordinator_->coordinator().Register(worker).ok());
    }

    options.task.set_type(TASK_TYPE_EVALUATOR);
    options.task.set_index(0);
    options.incarnation = 7;
    options.assignment_wait = absl::Milliseconds(200);
    options.log_waits_every = absl::Hours(1);
    options.coordinator_address = coordinator_->address();
    loop_ = std::make_unique<EvaluationLoop>(calls_.NewChannel(coordinator_->address()), env_,
                                             clock_, metrics_, options);
    loop_->Start();
  }

  // Writes the parameters of `trained` as ckpt-<step> of the staging folder
  // (two shard files, as two parameter servers would), for the shards to
  // save when the job reaches `step`.
  void Stage(int64_t step, const Trained& trained) {
    auto written = WriteParametersCheckpoint(env_, staged_dir_, step, *trained.parameters, kShards);
    ASSERT_TRUE(written.ok()) << written.status();
  }

  // Has the worker train up to `step` and waits until the coordinator has
  // saved ckpt-<step> from the shards: one of checkpoint.every_steps, or the
  // final one at stop.max_steps. Tests put stop.max_steps off the
  // every_steps grid: a step on it could be saved as an ordinary checkpoint
  // before the coordinator sees the stop.
  void TrainTo(int64_t step) {
    if (global_step_ == 0) {
      // The job trains once the evaluator is there too.
      absl::StatusOr<Assignment> assignment = coordinator_->AwaitAssignment(worker_, 1, kWait);
      ASSERT_TRUE(assignment.ok()) << assignment.status();
      ASSERT_EQ(assignment->job_id(), job_id_);
    }
    ProgressReport report;
    *report.mutable_task() = worker_;
    report.set_incarnation(1);
    report.set_job_id(job_id_);
    report.set_steps(step - global_step_);
    report.set_parameter_version(step);
    report.set_loss(0.5);
    absl::StatusOr<ProgressResponse> response = coordinator_->coordinator().ReportProgress(report);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->global_step(), step);
    global_step_ = step;
    AwaitEvent(absl::StrCat("a job with ckpt-", step), [step](const JobEvent& event) {
      if (event.has_checkpoint()) return event.checkpoint().step() == step;
      for (const CheckpointInfo& info : event.status().checkpoints()) {
        if (info.step() == step) return true;
      }
      return false;
    });
  }

  // Has the job save ckpt-<step> with the parameters of `trained`.
  void Checkpoint(int64_t step, const Trained& trained) {
    Stage(step, trained);
    TrainTo(step);
  }

  // Writes the parameters of `trained` as ckpt-<step> of the model_dir, as
  // a job that trained there before would have.
  void WriteCheckpoint(int64_t step, const Trained& trained, bool final = false) {
    auto written =
        WriteParametersCheckpoint(env_, model_dir_, step, *trained.parameters, kShards, final);
    ASSERT_TRUE(written.ok()) << written.status();
  }

  // Watches the job until an event is `wanted`; fails the test (saying the
  // job never became `what`) if none comes. Returns the job's status as
  // the last status event had it.
  JobStatus AwaitEvent(const std::string& what,
                       const std::function<bool(const JobEvent&)>& wanted) {
    WatchJobRequest request;
    request.set_job_id(job_id_);
    auto source = coordinator_->coordinator().WatchJob(request);
    JobStatus last;
    if (!source.ok()) {
      ADD_FAILURE() << source.status();
      return last;
    }
    SourceReader<JobEvent> reader(*std::move(source), kWait);
    while (std::optional<JobEvent> event = reader.Next()) {
      if (event->has_status()) last = event->status();
      if (wanted(*event)) return last;
    }
    ADD_FAILURE() << "job " << job_id_ << " never became " << what << "; last "
                  << JobState_Name(last.state()) << ": " << last.reason();
    return last;
  }

  JobStatus AwaitState(JobState state) {
    return AwaitEvent(JobState_Name(state), [state](const JobEvent& event) {
      return event.has_status() && event.status().state() == state;
    });
  }

  // The eval reports the coordinator accepted, once `count` arrived or
  // `timeout` passed.
  std::vector<EvalReport> WaitForReports(size_t count, absl::Duration timeout) const {
    calls_.WaitForCalls("ReportEval", count, timeout);
    return calls_.Requests<EvalReport>("ReportEval");
  }

  std::vector<EvalReport> Reports(size_t count) {
    std::vector<EvalReport> reports = WaitForReports(count, kWait);
    EXPECT_EQ(reports.size(), count);
    return reports;
  }

  // The steps of the checkpoint releases the coordinator accepted.
  std::vector<int64_t> Released() const {
    std::vector<int64_t> steps;
    for (const ReleaseCheckpointRequest& release :
         calls_.Requests<ReleaseCheckpointRequest>("ReleaseCheckpoint")) {
      steps.push_back(release.step());
    }
    return steps;
  }

  double Skipped(const std::string& reason) {
    return CounterValue(*registry_, "pstrain_evaluator_checkpoints_skipped_total", "reason",
                        reason);
  }

  PosixEnv env_;
  FakeClock clock_;
  std::unique_ptr<InProcessCoordinator> coordinator_;
  coordinator::CoordinatorCallLog calls_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  EvaluatorMetrics metrics_{*registry_};
  std::string model_dir_;
  std::string staged_dir_;
  std::string job_id_;
  TaskId worker_;
  int64_t global_step_ = 0;
  std::unique_ptr<EvaluationLoop> loop_;
};

TEST_F(EvaluationLoopTest, ThrottlingSkipsTheMiddleCheckpointButNotTheFinalOne) {
  JobSpec spec = ToySpec(model_dir_, "eval { throttle_secs: 60 }");
  Trained early = Train(spec, 5), late = Train(spec, 30);
  spec.mutable_checkpoint()->set_every_steps(10);
  spec.mutable_stop()->set_max_steps(25);
  StartLoop(spec);

  Checkpoint(10, early);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].checkpoint_step(), 10);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_EVALUATED);
  // Within the throttle: ckpt-20 waits, then the final one replaces it.
  Checkpoint(20, early);
  ASSERT_TRUE(calls_.WaitForStreamed("WatchCheckpoints", 2, kWait));
  Checkpoint(25, late);  // stop.max_steps: the final checkpoint
  reports = Reports(3);
  // The skipped checkpoint is reported, with why, so the job accounts for
  // every checkpoint.
  EXPECT_EQ(reports[1].checkpoint_step(), 20);
  EXPECT_EQ(reports[1].status(), EVAL_STATUS_SKIPPED);
  EXPECT_THAT(reports[1].reason(), HasSubstr("throttle_secs"));
  EXPECT_TRUE(reports[1].metrics().empty());
  EXPECT_EQ(reports[2].checkpoint_step(), 25);
  EXPECT_EQ(reports[2].status(), EVAL_STATUS_EVALUATED);
  EXPECT_TRUE(reports[2].final());
  EXPECT_EQ(reports[2].metrics().at("loss"), late.metrics.at("loss"));
  EXPECT_THAT(Released(), UnorderedElementsAre(10, 20, 25));
  EXPECT_EQ(Skipped("throttled"), 1);
  EXPECT_EQ(reports[0].task().type(), TASK_TYPE_EVALUATOR);
  EXPECT_EQ(reports[0].incarnation(), 7u);
  EXPECT_EQ(reports[0].job_id(), job_id_);
  EXPECT_GT(reports[0].examples(), 0);
  // The final evaluation ends the job.
  EXPECT_EQ(AwaitState(JOB_STATE_SUCCEEDED).last_eval_step(), 25);

  // Eval summaries for both steps, read back as TensorBoard and scripts do.
  loop_->Stop();
  auto scalars = ReadScalarJsonl(env_, JoinPath(EvalSummaryDir(model_dir_), kScalarJsonlFileName));
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  std::map<int64_t, int> per_step;
  for (const ScalarRecord& record : *scalars) ++per_step[record.step];
  EXPECT_EQ(per_step, (std::map<int64_t, int>{{10, 2}, {25, 2}}));
}

TEST_F(EvaluationLoopTest, HonoursTheStartDelay) {
  JobSpec spec = ToySpec(model_dir_, "eval { start_delay_secs: 100 throttle_secs: 0 }");
  Trained trained = Train(spec, 3);
  spec.mutable_checkpoint()->set_every_steps(10);
  StartLoop(spec);
  Checkpoint(10, trained);
  ASSERT_TRUE(calls_.WaitForStreamed("WatchCheckpoints", 1, kWait));
  clock_.Advance(absl::Seconds(99));
  EXPECT_TRUE(WaitForReports(1, absl::Milliseconds(500)).empty());
  clock_.Advance(absl::Seconds(1));
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].checkpoint_step(), 10);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_EVALUATED);
}

TEST_F(EvaluationLoopTest, ReportsMissingAndDamagedCheckpointsWithTheirReason) {
  // The start delay holds ckpt-40 back until the test has removed it.
  JobSpec spec = ToySpec(model_dir_, "eval { start_delay_secs: 5 throttle_secs: 0 }");
  Trained trained = Train(spec, 0);
  spec.mutable_checkpoint()->set_every_steps(10);
  spec.mutable_stop()->set_max_steps(45);
  StartLoop(spec);
  Checkpoint(40, trained);
  ASSERT_TRUE(calls_.WaitForStreamed("WatchCheckpoints", 1, kWait));
  ASSERT_TRUE(RemoveTree(env_, CheckpointDir(model_dir_, 40)).ok());
  clock_.Advance(absl::Seconds(5));
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_MISSING_CHECKPOINT);
  EXPECT_THAT(reports[0].reason(), HasSubstr("ckpt-40"));
  EXPECT_TRUE(reports[0].metrics().empty());

  // ps/1 saves a damaged file in the final checkpoint.
  Stage(45, trained);
  ASSERT_TRUE(
      FlipBit(env_, JoinPath(CheckpointDir(staged_dir_, 45), ShardFileName(1, 2)), 100).ok());
  TrainTo(45);
  reports = Reports(2);
  EXPECT_EQ(reports[1].checkpoint_step(), 45);
  EXPECT_EQ(reports[1].status(), EVAL_STATUS_MISSING_CHECKPOINT);
  EXPECT_TRUE(reports[1].final());
  EXPECT_THAT(reports[1].reason(), HasSubstr(ShardFileName(1, 2)));
  EXPECT_THAT(Released(), UnorderedElementsAre(40, 45));
  EXPECT_EQ(Skipped("missing_checkpoint"), 2);
  // Without an evaluation of its final checkpoint the job fails.
  EXPECT_THAT(AwaitState(JOB_STATE_FAILED).reason(),
              HasSubstr("the final checkpoint ckpt-45 cannot be evaluated"));
}

TEST_F(EvaluationLoopTest, ExportsTheBestOnlyOnImprovementAndTheFinalOne) {
  JobSpec spec = ToySpec(model_dir_, "eval { throttle_secs: 0 }");
  Trained good = Train(spec, 10), worse = Train(spec, 0), best = Train(spec, 40);
  ASSERT_LT(good.metrics.at("loss"), worse.metrics.at("loss"));
  ASSERT_LT(best.metrics.at("loss"), good.metrics.at("loss"));
  spec.mutable_checkpoint()->set_every_steps(10);
  spec.mutable_stop()->set_max_steps(25);
  StartLoop(spec);
  const std::string best_dir = JoinPath(model_dir_, "export/best");
  const std::string final_dir = JoinPath(model_dir_, "export/final");

  Checkpoint(10, good);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].export_path(), ExportVersionDir(best_dir, 10));
  Checkpoint(20, worse);
  reports = Reports(2);
  EXPECT_EQ(reports[1].export_path(), "");
  Checkpoint(25, best);  // the final checkpoint
  reports = Reports(3);
  EXPECT_EQ(reports[2].export_path(), ExportVersionDir(best_dir, 25));
  EXPECT_EQ(reports[2].final_export_path(), ExportVersionDir(final_dir, 25));

  auto versions = ListExportVersions(env_, best_dir);
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].step, 10);
  EXPECT_EQ((*versions)[1].step, 25);
  // Each export loads on its own and carries the metrics it was chosen by.
  auto exported = LoadExportedModel(env_, best_dir);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ((*exported)->global_step(), 25);
  EXPECT_EQ((*exported)->manifest().metrics().at("loss"), best.metrics.at("loss"));
  auto final_export = LoadExportedModel(env_, final_dir);
  ASSERT_TRUE(final_export.ok()) << final_export.status();
  EXPECT_EQ((*final_export)->global_step(), 25);
  EXPECT_EQ(CounterValue(*registry_, "pstrain_evaluator_exports_total", "kind", "best"), 2);
}

TEST_F(EvaluationLoopTest, EvaluationMatchesTheSingleProcessTrainer) {
  JobSpec spec = ToySpec(
      model_dir_,
      R"(eval { throttle_secs: 0 metrics: ["loss", "accuracy", "auc", "top_k_accuracy"] top_k: 2
              best_metric: "accuracy" })");
  Trained trained = Train(spec, 12);
  spec.mutable_stop()->set_max_steps(12);
  StartLoop(spec);
  Checkpoint(12, trained);  // the final checkpoint
  std::vector<EvalReport> reports = Reports(1);
  std::map<std::string, double> reported(reports[0].metrics().begin(), reports[0].metrics().end());
  EXPECT_EQ(reported, trained.metrics);
  EXPECT_EQ(reports[0].examples(), 60);
}

TEST_F(EvaluationLoopTest, EvaluationOfAnEmbeddingModelMatchesTheSingleProcessTrainer) {
  // Evaluated on other data than trained on, so some ids have no row in the
  // checkpoint and read as their initial values, as on the shards.
  auto raw = ParseJobSpecText(absl::StrCat(R"(
    model { wide_and_deep { embedding { vocabulary_size: 400 dim: 4 } hidden_units: [8] } }
    train_data { synthetic_clicks { num_examples: 300 num_fields: 4 vocabulary_per_field: 100
                                    seed: 3 } batch_size: 30 }
    eval_data { synthetic_clicks { num_examples: 200 num_fields: 4 vocabulary_per_field: 100
                                   seed: 4 } batch_size: 50 }
    optimizer { adagrad {} learning_rate: 0.1 }
    training { seed: 9 }
    stop { max_steps: 1000 }
    eval { throttle_secs: 0 metrics: ["loss", "accuracy", "auc"] }
    checkpoint { model_dir: ")",
                                           model_dir_, R"(" }
  )"));
  ASSERT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  ASSERT_TRUE(spec.ok()) << spec.status();
  Trained trained = Train(*spec, 6);
  const int64_t stored = trained.parameters->table("deep/embedding") != nullptr
                             ? trained.parameters->table("deep/embedding")->num_rows()
                             : -1;
  EXPECT_GT(stored, 0);
  EXPECT_LT(stored, 400);
  spec->mutable_stop()->set_max_steps(6);
  StartLoop(*spec);
  Checkpoint(6, trained);  // the final checkpoint
  std::vector<EvalReport> reports = Reports(1);
  ASSERT_EQ(reports[0].status(), EVAL_STATUS_EVALUATED) << reports[0].reason();
  std::map<std::string, double> reported(reports[0].metrics().begin(), reports[0].metrics().end());
  EXPECT_EQ(reported, trained.metrics);
}

TEST_F(EvaluationLoopTest, ContinuousEvalFollowsModelDirUntilTheFinalCheckpoint) {
  const JobSpec spec =
      ToySpec(model_dir_, "mode: JOB_MODE_CONTINUOUS_EVAL eval { throttle_secs: 0 }");
  Trained trained = Train(spec, 4);
  WriteCheckpoint(5, trained);
  EvaluationLoopOptions options;
  options.model_dir_poll_interval = absl::Seconds(5);
  StartLoop(spec, options);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].checkpoint_step(), 5);
  EXPECT_FALSE(reports[0].final());

  WriteCheckpoint(6, trained);
  WriteCheckpoint(7, trained, /*final=*/true);
  clock_.Advance(absl::Seconds(5));
  reports = Reports(3);
  EXPECT_EQ(reports[1].checkpoint_step(), 6);
  EXPECT_EQ(reports[1].status(), EVAL_STATUS_SKIPPED);
  EXPECT_EQ(reports[2].checkpoint_step(), 7);
  EXPECT_TRUE(reports[2].final());
  EXPECT_EQ(Skipped("throttled"), 1);  // ckpt-6, replaced by the final one
  EXPECT_TRUE(Released().empty());     // no leases outside the stream
  EXPECT_EQ(AwaitState(JOB_STATE_SUCCEEDED).last_eval_step(), 7);
}

TEST_F(EvaluationLoopTest, ContinuousEvalGivesUpAfterItsTimeout) {
  const JobSpec spec = ToySpec(model_dir_, "mode: JOB_MODE_CONTINUOUS_EVAL");
  EvaluationLoopOptions options;
  options.continuous_eval_timeout = absl::Seconds(30);
  // The timeout counts from when the evaluator takes the job up, which is
  // before it opens the job's summary writer.
  absl::Notification taken_up;
  options.open_summary_writer = [&](const std::string& model_dir) {
    absl::StatusOr<std::unique_ptr<SummaryWriter>> writer =
        FileSummaryWriter::Open(&env_, EvalSummaryDir(model_dir));
    taken_up.Notify();
    return writer;
  };
  StartLoop(spec, options);
  ASSERT_TRUE(taken_up.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(WaitForReports(1, absl::Milliseconds(300)).empty());
  clock_.Advance(absl::Seconds(30));
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_NO_NEW_CHECKPOINT);
  EXPECT_TRUE(reports[0].final());
  EXPECT_THAT(reports[0].reason(), HasSubstr(model_dir_));
  // The job ends with the evaluator's word.
  EXPECT_THAT(AwaitState(JOB_STATE_SUCCEEDED).reason(), HasSubstr("found no new checkpoint"));
}

TEST_F(EvaluationLoopTest, EvalModeEvaluatesTheNewestGoodCheckpointOnce) {
  const JobSpec spec = ToySpec(model_dir_, "mode: JOB_MODE_EVAL");
  Trained trained = Train(spec, 6), other = Train(spec, 1);
  WriteCheckpoint(8, trained);
  WriteCheckpoint(9, other);
  ASSERT_TRUE(FlipBit(env_, JoinPath(CheckpointDir(model_dir_, 9), ShardFileName(0, 2)), 10).ok());
  StartLoop(spec);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].checkpoint_step(), 8);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_EVALUATED);
  EXPECT_TRUE(reports[0].final());
  EXPECT_EQ(reports[0].metrics().at("loss"), trained.metrics.at("loss"));
  EXPECT_EQ(AwaitState(JOB_STATE_SUCCEEDED).last_eval_step(), 8);
}

TEST_F(EvaluationLoopTest, AJobWithoutReadableEvalDataIsReportedFailed) {
  JobSpec spec = ToySpec(model_dir_, "");
  spec.mutable_eval_data()->mutable_fashion_mnist()->set_dir("/nonexistent/fashion");
  StartLoop(spec);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_FAILED);
  EXPECT_THAT(reports[0].reason(), HasSubstr("/nonexistent/fashion"));
  EXPECT_THAT(AwaitState(JOB_STATE_FAILED).reason(),
              HasSubstr("evaluator/0 cannot evaluate the job"));
}

TEST_F(EvaluationLoopTest, ARestartedEvaluatorSkipsWhatWasEvaluatedAndReportsTheFinalAgain) {
  JobSpec spec = ToySpec(model_dir_, "eval { throttle_secs: 0 }");
  spec.mutable_checkpoint()->set_every_steps(10);
  spec.mutable_stop()->set_max_steps(15);
  {
    // An earlier evaluator's summaries: steps 10 and 15 were evaluated.
    auto writer = FileSummaryWriter::Open(&env_, EvalSummaryDir(model_dir_));
    ASSERT_TRUE(writer.ok());
    for (int64_t step : {10, 15}) {
      ASSERT_TRUE((*writer)->WriteScalar(step, "loss", 0.25 * step).ok());
      ASSERT_TRUE((*writer)->WriteScalar(step, "accuracy", 0.5).ok());
    }
    ASSERT_TRUE((*writer)->Close().ok());
  }
  Trained trained = Train(spec, 0);
  StartLoop(spec);
  Checkpoint(10, trained);
  Checkpoint(15, trained);  // the final checkpoint
  std::vector<EvalReport> reports = Reports(2);
  EXPECT_EQ(reports[0].checkpoint_step(), 10);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_SKIPPED);
  EXPECT_EQ(reports[0].reason(), "it was evaluated before");
  EXPECT_EQ(reports[1].checkpoint_step(), 15);
  EXPECT_EQ(reports[1].status(), EVAL_STATUS_EVALUATED);
  EXPECT_EQ(reports[1].metrics().at("loss"), 3.75);  // the stored result, not a new one
  EXPECT_EQ(Skipped("already_evaluated"), 1);
  EXPECT_THAT(Released(), UnorderedElementsAre(10, 15));
}

TEST_F(EvaluationLoopTest, StopsWhenTheCoordinatorShutsTheClusterDown) {
  const JobSpec spec = ToySpec(model_dir_, "mode: JOB_MODE_CONTINUOUS_EVAL");
  WriteCheckpoint(5, Train(spec, 1));
  absl::Notification shutdown;
  EvaluationLoopOptions options;
  options.on_shutdown = [&shutdown](int /*exit_code*/) { shutdown.Notify(); };
  StartLoop(spec, options);
  Reports(1);  // the evaluator follows the job

  ShutdownRequest request;
  request.set_stop_running_job(true);
  ASSERT_TRUE(coordinator_->coordinator().Shutdown(request).ok());
  // Heartbeats run on the evaluator's clock. From now on its waits end at
  // once (the waits in progress too, once the clock passes their
  // deadlines), so it hears of the shutdown as soon as it is told.
  clock_.JumpToDeadlines();
  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(shutdown.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(loop_->shutdown_requested());
  loop_->Stop();
  EXPECT_TRUE(loop_->run_status().ok()) << loop_->run_status();
  EXPECT_EQ(calls_.Count("Register"), 1u);
}

}  // namespace
}  // namespace evaluator
}  // namespace pstrain
