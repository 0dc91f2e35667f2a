#include "evaluator/evaluation_loop.h"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/checkpoint/checkpoint_layout.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/test_checkpoints.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/test_files.h"
#include "common/export/export_versions.h"
#include "common/export/exported_model.h"
#include "common/export/testing/parameters_checkpoint.h"
#include "common/summary/file_summary_writer.h"
#include "common/summary/scalar_jsonl.h"
#include "common/training/local_trainer.h"
#include "common/clock/fake_clock.h"
#include "evaluator/testing/fake_cluster_service.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"

namespace pstrain {
namespace evaluator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr absl::Duration kWait = absl::Seconds(60);
constexpr char kJob[] = "job-1";

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
    ASSERT_TRUE(fake_.Start().ok());
    model_dir_ = JoinPath(NewTestDir(env_), "model");
  }

  void TearDown() override {
    if (loop_ != nullptr) loop_->Stop();
  }

  void StartLoop(const JobSpec& spec, EvaluationLoopOptions options = {}) {
    options.task.set_type(TASK_TYPE_EVALUATOR);
    options.task.set_index(0);
    options.incarnation = 7;
    options.assignment_wait = absl::Milliseconds(200);
    options.log_waits_every = absl::Hours(1);
    options.coordinator_address = fake_.address();
    loop_ = std::make_unique<EvaluationLoop>(
        grpc::CreateChannel(fake_.address(), grpc::InsecureChannelCredentials()), env_, clock_,
        metrics_, options);
    Assignment assignment;
    assignment.set_job_id(kJob);
    *assignment.mutable_spec() = spec;
    fake_.SetAssignment(assignment);
    loop_->Start();
  }

  // Writes `parameters` as ckpt-<step> (two shard files, as two parameter
  // servers would) and tells the evaluator of it.
  void Checkpoint(int64_t step, const Trained& trained, bool final = false, bool notify = true) {
    auto written = WriteParametersCheckpoint(env_, model_dir_, step, *trained.parameters, 2, final);
    ASSERT_TRUE(written.ok()) << written.status();
    if (notify) Notify(step, final);
  }
  void Notify(int64_t step, bool final = false) {
    CheckpointInfo info;
    info.set_step(step);
    info.set_path(CheckpointDir(model_dir_, step));
    info.set_final(final);
    fake_.Notify(kJob, info);
  }

  std::vector<EvalReport> Reports(size_t count) {
    std::vector<EvalReport> reports = fake_.WaitForReports(count, kWait);
    EXPECT_EQ(reports.size(), count);
    return reports;
  }

  double Skipped(const std::string& reason) {
    return CounterValue(*registry_, "pstrain_evaluator_checkpoints_skipped_total", "reason",
                        reason);
  }

  PosixEnv env_;
  FakeClock clock_;
  FakeClusterService fake_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  EvaluatorMetrics metrics_{*registry_};
  std::string model_dir_;
  std::unique_ptr<EvaluationLoop> loop_;
};

TEST_F(EvaluationLoopTest, ThrottlingSkipsTheMiddleCheckpointButNotTheFinalOne) {
  const JobSpec spec = ToySpec(model_dir_, "eval { throttle_secs: 60 }");
  Trained early = Train(spec, 5), late = Train(spec, 30);
  StartLoop(spec);

  Checkpoint(10, early);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].checkpoint_step(), 10);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_EVALUATED);
  // Within the throttle: ckpt-20 waits, then the final one replaces it.
  Checkpoint(20, early);
  ASSERT_TRUE(fake_.WaitForSent(2, kWait));
  Checkpoint(30, late, /*final=*/true);
  reports = Reports(3);
  // The skipped checkpoint is reported, with why, so the job accounts for
  // every checkpoint.
  EXPECT_EQ(reports[1].checkpoint_step(), 20);
  EXPECT_EQ(reports[1].status(), EVAL_STATUS_SKIPPED);
  EXPECT_THAT(reports[1].reason(), HasSubstr("throttle_secs"));
  EXPECT_TRUE(reports[1].metrics().empty());
  EXPECT_EQ(reports[2].checkpoint_step(), 30);
  EXPECT_EQ(reports[2].status(), EVAL_STATUS_EVALUATED);
  EXPECT_TRUE(reports[2].final());
  EXPECT_EQ(reports[2].metrics().at("loss"), late.metrics.at("loss"));
  EXPECT_THAT(fake_.released(), UnorderedElementsAre(10, 20, 30));
  EXPECT_EQ(Skipped("throttled"), 1);
  EXPECT_EQ(reports[0].task().type(), TASK_TYPE_EVALUATOR);
  EXPECT_EQ(reports[0].incarnation(), 7u);
  EXPECT_EQ(reports[0].job_id(), kJob);
  EXPECT_GT(reports[0].examples(), 0);

  // Eval summaries for both steps, read back as TensorBoard and scripts do.
  loop_->Stop();
  auto scalars = ReadScalarJsonl(env_, JoinPath(EvalSummaryDir(model_dir_), kScalarJsonlFileName));
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  std::map<int64_t, int> per_step;
  for (const ScalarRecord& record : *scalars) ++per_step[record.step];
  EXPECT_EQ(per_step, (std::map<int64_t, int>{{10, 2}, {30, 2}}));
}

TEST_F(EvaluationLoopTest, HonoursTheStartDelay) {
  const JobSpec spec = ToySpec(model_dir_, "eval { start_delay_secs: 100 throttle_secs: 0 }");
  Trained trained = Train(spec, 3);
  StartLoop(spec);
  Checkpoint(10, trained);
  ASSERT_TRUE(fake_.WaitForSent(1, kWait));
  clock_.Advance(absl::Seconds(99));
  EXPECT_TRUE(fake_.WaitForReports(1, absl::Milliseconds(500)).empty());
  clock_.Advance(absl::Seconds(1));
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].checkpoint_step(), 10);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_EVALUATED);
}

TEST_F(EvaluationLoopTest, ReportsMissingAndDamagedCheckpointsWithTheirReason) {
  const JobSpec spec = ToySpec(model_dir_, "eval { throttle_secs: 0 }");
  Trained trained = Train(spec, 0);
  StartLoop(spec);
  Notify(40);  // no such folder
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_MISSING_CHECKPOINT);
  EXPECT_THAT(reports[0].reason(), HasSubstr("ckpt-40"));
  EXPECT_TRUE(reports[0].metrics().empty());

  Checkpoint(50, trained, /*final=*/true, /*notify=*/false);
  const std::string shard = JoinPath(CheckpointDir(model_dir_, 50), ShardFileName(1, 2));
  ASSERT_TRUE(FlipBit(env_, shard, 100).ok());
  Notify(50, /*final=*/true);
  reports = Reports(2);
  EXPECT_EQ(reports[1].checkpoint_step(), 50);
  EXPECT_EQ(reports[1].status(), EVAL_STATUS_MISSING_CHECKPOINT);
  EXPECT_TRUE(reports[1].final());
  EXPECT_THAT(reports[1].reason(), HasSubstr(ShardFileName(1, 2)));
  EXPECT_THAT(fake_.released(), UnorderedElementsAre(40, 50));
  EXPECT_EQ(Skipped("missing_checkpoint"), 2);
}

TEST_F(EvaluationLoopTest, ExportsTheBestOnlyOnImprovementAndTheFinalOne) {
  const JobSpec spec = ToySpec(model_dir_, "eval { throttle_secs: 0 }");
  Trained good = Train(spec, 10), worse = Train(spec, 0), best = Train(spec, 40);
  ASSERT_LT(good.metrics.at("loss"), worse.metrics.at("loss"));
  ASSERT_LT(best.metrics.at("loss"), good.metrics.at("loss"));
  StartLoop(spec);
  const std::string best_dir = JoinPath(model_dir_, "export/best");
  const std::string final_dir = JoinPath(model_dir_, "export/final");

  Checkpoint(10, good);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].export_path(), ExportVersionDir(best_dir, 10));
  Checkpoint(20, worse);
  reports = Reports(2);
  EXPECT_EQ(reports[1].export_path(), "");
  Checkpoint(30, best, /*final=*/true);
  reports = Reports(3);
  EXPECT_EQ(reports[2].export_path(), ExportVersionDir(best_dir, 30));
  EXPECT_EQ(reports[2].final_export_path(), ExportVersionDir(final_dir, 30));

  auto versions = ListExportVersions(env_, best_dir);
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].step, 10);
  EXPECT_EQ((*versions)[1].step, 30);
  // Each export loads on its own and carries the metrics it was chosen by.
  auto exported = LoadExportedModel(env_, best_dir);
  ASSERT_TRUE(exported.ok()) << exported.status();
  EXPECT_EQ((*exported)->global_step(), 30);
  EXPECT_EQ((*exported)->manifest().metrics().at("loss"), best.metrics.at("loss"));
  auto final_export = LoadExportedModel(env_, final_dir);
  ASSERT_TRUE(final_export.ok()) << final_export.status();
  EXPECT_EQ((*final_export)->global_step(), 30);
  EXPECT_EQ(CounterValue(*registry_, "pstrain_evaluator_exports_total", "kind", "best"), 2);
}

TEST_F(EvaluationLoopTest, EvaluationMatchesTheSingleProcessTrainer) {
  const JobSpec spec = ToySpec(
      model_dir_,
      R"(eval { throttle_secs: 0 metrics: ["loss", "accuracy", "auc", "top_k_accuracy"] top_k: 2
              best_metric: "accuracy" })");
  Trained trained = Train(spec, 12);
  StartLoop(spec);
  Checkpoint(12, trained, /*final=*/true);
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
  StartLoop(*spec);
  Checkpoint(6, trained, /*final=*/true);
  std::vector<EvalReport> reports = Reports(1);
  ASSERT_EQ(reports[0].status(), EVAL_STATUS_EVALUATED) << reports[0].reason();
  std::map<std::string, double> reported(reports[0].metrics().begin(), reports[0].metrics().end());
  EXPECT_EQ(reported, trained.metrics);
}

TEST_F(EvaluationLoopTest, ContinuousEvalFollowsModelDirUntilTheFinalCheckpoint) {
  const JobSpec spec =
      ToySpec(model_dir_, "mode: JOB_MODE_CONTINUOUS_EVAL eval { throttle_secs: 0 }");
  Trained trained = Train(spec, 4);
  Checkpoint(5, trained, false, /*notify=*/false);
  EvaluationLoopOptions options;
  options.model_dir_poll_interval = absl::Seconds(5);
  StartLoop(spec, options);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].checkpoint_step(), 5);
  EXPECT_FALSE(reports[0].final());

  Checkpoint(6, trained, false, false);
  Checkpoint(7, trained, /*final=*/true, false);
  clock_.Advance(absl::Seconds(5));
  reports = Reports(3);
  EXPECT_EQ(reports[1].checkpoint_step(), 6);
  EXPECT_EQ(reports[1].status(), EVAL_STATUS_SKIPPED);
  EXPECT_EQ(reports[2].checkpoint_step(), 7);
  EXPECT_TRUE(reports[2].final());
  EXPECT_EQ(Skipped("throttled"), 1);     // ckpt-6, replaced by the final one
  EXPECT_TRUE(fake_.released().empty());  // no leases outside the stream
}

TEST_F(EvaluationLoopTest, ContinuousEvalGivesUpAfterItsTimeout) {
  const JobSpec spec = ToySpec(model_dir_, "mode: JOB_MODE_CONTINUOUS_EVAL");
  EvaluationLoopOptions options;
  options.continuous_eval_timeout = absl::Seconds(30);
  StartLoop(spec, options);
  EXPECT_TRUE(fake_.WaitForReports(1, absl::Milliseconds(300)).empty());
  clock_.Advance(absl::Seconds(30));
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_NO_NEW_CHECKPOINT);
  EXPECT_TRUE(reports[0].final());
  EXPECT_THAT(reports[0].reason(), HasSubstr(model_dir_));
}

TEST_F(EvaluationLoopTest, EvalModeEvaluatesTheNewestGoodCheckpointOnce) {
  const JobSpec spec = ToySpec(model_dir_, "mode: JOB_MODE_EVAL");
  Trained trained = Train(spec, 6), other = Train(spec, 1);
  Checkpoint(8, trained, false, false);
  Checkpoint(9, other, false, false);
  ASSERT_TRUE(FlipBit(env_, JoinPath(CheckpointDir(model_dir_, 9), ShardFileName(0, 2)), 10).ok());
  StartLoop(spec);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].checkpoint_step(), 8);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_EVALUATED);
  EXPECT_TRUE(reports[0].final());
  EXPECT_EQ(reports[0].metrics().at("loss"), trained.metrics.at("loss"));
}

TEST_F(EvaluationLoopTest, AJobWithoutReadableEvalDataIsReportedFailed) {
  JobSpec spec = ToySpec(model_dir_, "");
  spec.mutable_eval_data()->mutable_fashion_mnist()->set_dir("/nonexistent/fashion");
  StartLoop(spec);
  std::vector<EvalReport> reports = Reports(1);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_FAILED);
  EXPECT_THAT(reports[0].reason(), HasSubstr("/nonexistent/fashion"));
}

TEST_F(EvaluationLoopTest, ARestartedEvaluatorSkipsWhatWasEvaluatedAndReportsTheFinalAgain) {
  const JobSpec spec = ToySpec(model_dir_, "eval { throttle_secs: 0 }");
  {
    // An earlier evaluator's summaries: steps 10 and 20 were evaluated.
    auto writer = FileSummaryWriter::Open(&env_, EvalSummaryDir(model_dir_));
    ASSERT_TRUE(writer.ok());
    for (int64_t step : {10, 20}) {
      ASSERT_TRUE((*writer)->WriteScalar(step, "loss", 0.25 * step).ok());
      ASSERT_TRUE((*writer)->WriteScalar(step, "accuracy", 0.5).ok());
    }
    ASSERT_TRUE((*writer)->Close().ok());
  }
  Trained trained = Train(spec, 0);
  StartLoop(spec);
  Checkpoint(10, trained);
  Checkpoint(20, trained, /*final=*/true);
  std::vector<EvalReport> reports = Reports(2);
  EXPECT_EQ(reports[0].checkpoint_step(), 10);
  EXPECT_EQ(reports[0].status(), EVAL_STATUS_SKIPPED);
  EXPECT_EQ(reports[0].reason(), "it was evaluated before");
  EXPECT_EQ(reports[1].checkpoint_step(), 20);
  EXPECT_EQ(reports[1].status(), EVAL_STATUS_EVALUATED);
  EXPECT_EQ(reports[1].metrics().at("loss"), 5.0);  // the stored result, not a new one
  EXPECT_EQ(Skipped("already_evaluated"), 1);
  EXPECT_THAT(fake_.released(), UnorderedElementsAre(10, 20));
}

TEST_F(EvaluationLoopTest, StopsWhenTheCoordinatorShutsTheClusterDown) {
  const JobSpec spec = ToySpec(model_dir_, "");
  StartLoop(spec);
  fake_.SetShutdown(true);
  // Heartbeats run on the fake clock.
  for (int i = 0; i < 100 && !loop_->shutdown_requested(); ++i) {
    clock_.Advance(absl::Seconds(1));
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(loop_->shutdown_requested());
  loop_->Stop();
  EXPECT_TRUE(loop_->run_status().ok()) << loop_->run_status();
  EXPECT_EQ(fake_.registrations(), 1);
}

}  // namespace
}  // namespace evaluator
}  // namespace pstrain
