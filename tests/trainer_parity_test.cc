// One job, two trainers, one meaning: the same spec run by `pstrain
// train-local` and by a one-worker sync cluster (coordinator, a parameter
// server, a worker and the evaluator as processes on loopback) keeps the
// same checkpoints and leaves the same exports, because both follow the
// rules of common/job: the checkpoint schedule, max_to_keep retention, and
// the export policy (a best export only when it beats the best already in
// export_dir, exports_to_keep versions of each folder).
//
// The export folders start as a user's would after earlier runs: a better
// model under best/ and two older final exports. So a trainer that exported
// its final model as the best without comparing, or pruned nothing, leaves
// other exports than the other trainer.

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/checkpoint/checkpoint_catalog.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/export/export_versions.h"
#include "common/export/export_writer.h"
#include "common/export/testing/trained_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"
#include "tests/pstrain_command.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using testing_cluster::TestCluster;

// A checkpoint every 200 steps and the final one at 600, of which
// max_to_keep 1 leaves the final one. (The periodic ones are not at the same
// steps: the cluster's falls due when its worker reports step 200 and is
// named by the rounds its shard holds when it snapshots, which the worker
// may have trained on by a few. The final step is the same.)
std::string Spec(const std::string& name) {
  return absl::StrCat(R"pb(
    name: ")pb", name, R"pb("
    mode: JOB_MODE_TRAIN_AND_EVAL
    model { logistic_regression {} }
    train_data {
      synthetic_clicks { num_examples: 20000 seed: 5 }
      batch_size: 128
    }
    eval_data {
      synthetic_clicks { num_examples: 4000 seed: 5 }
      batch_size: 1000
    }
    optimizer {
      adagrad {}
      learning_rate: 0.1
    }
    training { update_mode: UPDATE_MODE_SYNC seed: 7 steps_per_loop: 200 }
    stop { max_steps: 600 }
    checkpoint { model_dir: ")pb", name, R"pb(" every_steps: 200 max_to_keep: 1 }
    eval {
      metrics: [ "loss", "auc" ]
      best_metric: "loss"
      throttle_secs: 0
    }
    export { strategy: EXPORT_STRATEGY_BEST exports_to_keep: 2 }
  )pb");
}

// What earlier runs left in <model_dir>/export: best/10, whose loss no run
// of this job reaches (the labels are noisy), and final/10 and final/20.
void SeedExports(const std::string& model_dir) {
  absl::StatusOr<JobSpec> spec = ParseJobSpecText(Spec("seed"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  spec = PrepareJobSpec(*std::move(spec));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const testing_util::TrainedModel trained = testing_util::TrainModel(*spec, 10);
  PosixEnv env;
  const std::string exports = JoinPath(model_dir, "export");
  for (const auto& [folder, step] : std::vector<std::pair<std::string, int64_t>>{
           {"best", 10}, {"final", 10}, {"final", 20}}) {
    ExportSource source = testing_util::ExportSourceOf(trained, *spec, step);
    source.metrics = {{"loss", 0.01}, {"auc", 0.99}};
    absl::StatusOr<ExportManifest> written =
        WriteExport(env, ExportVersionDir(JoinPath(exports, folder), step), source,
                    trained.trainer->model(), *trained.parameters);
    ASSERT_TRUE(written.ok()) << written.status();
  }
}

// What a run left in `model_dir`.
struct KeptRun {
  std::vector<int64_t> checkpoints;
  std::vector<int64_t> best_exports;
  std::vector<int64_t> final_exports;
};

KeptRun Kept(const std::string& model_dir) {
  PosixEnv env;
  KeptRun kept;
  absl::StatusOr<std::vector<CheckpointRef>> checkpoints = ListCheckpoints(env, model_dir);
  EXPECT_TRUE(checkpoints.ok()) << checkpoints.status();
  if (checkpoints.ok()) {
    for (const CheckpointRef& checkpoint : *checkpoints) kept.checkpoints.push_back(checkpoint.step);
  }
  for (auto [folder, steps] : std::vector<std::pair<std::string, std::vector<int64_t>*>>{
           {"best", &kept.best_exports}, {"final", &kept.final_exports}}) {
    absl::StatusOr<std::vector<ExportVersion>> versions =
        ListExportVersions(env, JoinPath(model_dir, "export/" + folder));
    EXPECT_TRUE(versions.ok()) << versions.status();
    if (!versions.ok()) continue;
    for (const ExportVersion& version : *versions) steps->push_back(version.step);
  }
  return kept;
}

TEST(TrainerParityTest, TrainLocalAndASyncClusterKeepTheSameCheckpointsAndExports) {
  LocalClusterOptions options;
  options.num_ps = 1;
  options.num_workers = 1;
  options.evaluator = true;
  absl::StatusOr<std::unique_ptr<TestCluster>> cluster =
      TestCluster::Start("trainer_parity", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::string root = (*cluster)->checkpoint_root();

  // The cluster: model_dir is taken under its checkpoint root.
  const std::string cluster_dir = JoinPath(root, "parity_cluster");
  SeedExports(cluster_dir);
  absl::StatusOr<std::string> job_id = (*cluster)->Submit(Spec("parity_cluster"));
  ASSERT_TRUE(job_id.ok()) << job_id.status();
  const JobStatus status = (*cluster)->Follow(*job_id).final_status;
  ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.global_step(), 600);

  // train-local, in a model_dir of its own.
  const std::string local_dir = JoinPath(root, "parity_local");
  SeedExports(local_dir);
  const std::string spec_path = JoinPath(root, "parity_local.pbtxt");
  std::ofstream(spec_path) << Spec("parity_local");
  ExitStatus exit;
  const std::string output =
      RunPstrain({"train-local", spec_path, "--model_dir=" + local_dir}, &exit);
  ASSERT_TRUE(exit.ok()) << exit.ToString() << "\n" << output;

  const KeptRun local = Kept(local_dir);
  const KeptRun clustered = Kept(cluster_dir);
  EXPECT_THAT(local.checkpoints, ElementsAre(600));
  EXPECT_EQ(clustered.checkpoints, local.checkpoints);
  // No evaluation beat best/10; final/600 came and exports_to_keep 2 let
  // final/10 go.
  EXPECT_THAT(local.best_exports, ElementsAre(10));
  EXPECT_EQ(clustered.best_exports, local.best_exports);
  EXPECT_THAT(local.final_exports, ElementsAre(20, 600));
  EXPECT_EQ(clustered.final_exports, local.final_exports);
}

}  // namespace
}  // namespace pstrain
