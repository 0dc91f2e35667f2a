// Evaluation on a real cluster (coordinator, a parameter server, a worker
// and an evaluator as processes on loopback): every checkpoint a job
// announces is evaluated or skipped with a stated reason, retention
// (max_to_keep) never deletes a checkpoint while the evaluator holds it,
// and a continuous_eval job follows a model_dir to its final checkpoint.

#include <dirent.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using testing_cluster::ClusterTest;
using testing_cluster::JobRecord;

// ckpt-<step> folders of `model_dir`, by step.
std::set<int64_t> CheckpointFolders(const std::string& model_dir) {
  std::set<int64_t> steps;
  DIR* dir = ::opendir(model_dir.c_str());
  if (dir == nullptr) return steps;
  while (dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    int64_t step = 0;
    if (absl::StartsWith(name, "ckpt-") && absl::SimpleAtoi(name.substr(5), &step)) {
      steps.insert(step);
    }
  }
  ::closedir(dir);
  return steps;
}

// What became of each announced checkpoint: "evaluated", or why not.
std::map<int64_t, std::string> Outcomes(const JobRecord& job) {
  std::map<int64_t, std::string> outcomes;
  for (const EvalEvent& eval : job.Evaluations()) {
    outcomes[eval.checkpoint_step()] =
        eval.skipped_reason().empty() ? "evaluated" : eval.skipped_reason();
  }
  return outcomes;
}

class EvaluationTest : public ClusterTest {
 protected:
  EvaluationTest() : ClusterTest(1, 1) {}

  JobRecord Run(const std::string& spec) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(spec);
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    return cluster_->Follow(*job_id);
  }
};

TEST_F(EvaluationTest, EveryCheckpointIsEvaluatedOrSkippedWithAReasonAndNoneVanishesUnderIt) {
  // Checkpoints every 20 steps arrive faster than the evaluator scores the
  // 10,000 test images, and only the newest is kept: retention keeps
  // wanting to delete the one being evaluated.
  //
  // The job trains until an evaluation reaches its target accuracy, not
  // for a fixed number of steps: however long the evaluator takes to load
  // its data before its first evaluation, a checkpoint before the final
  // one is evaluated while newer ones arrive, which is what retention must
  // not delete under it. A fixed max_steps could end the job before the
  // evaluator is ready, leaving only the final checkpoint evaluated.
  // max_steps is only a bound, well past where the target is reached (an
  // accuracy of 0.8 takes about 300 steps).
  const JobRecord job = Run(R"pb(
    name: "fast-checkpoints"
    mode: JOB_MODE_TRAIN_AND_EVAL
    model { mlp { hidden_units: [ 64 ] } }
    train_data {
      fashion_mnist {}
      batch_size: 64
    }
    eval_data {
      fashion_mnist {}
      batch_size: 1000
    }
    optimizer {
      adam {}
      learning_rate: 0.002
    }
    training { steps_per_loop: 10 }
    stop { max_steps: 20000 target_metric_value: 0.8 }
    checkpoint { model_dir: "fast" every_steps: 20 max_to_keep: 1 }
    eval { throttle_secs: 0 best_metric: "accuracy" }
  )pb");
  const JobStatus& status = job.final_status;
  ASSERT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_TARGET_METRIC) << status.ShortDebugString();

  std::set<int64_t> announced;
  for (const CheckpointInfo& info : job.Checkpoints()) announced.insert(info.step());
  ASSERT_GE(announced.size(), 5u) << status.ShortDebugString();
  const std::map<int64_t, std::string> outcomes = Outcomes(job);
  int evaluated = 0;
  for (int64_t step : announced) {
    auto outcome = outcomes.find(step);
    ASSERT_NE(outcome, outcomes.end()) << "ckpt-" << step << " was neither evaluated nor skipped";
    // A checkpoint deleted under the evaluator would show as one that
    // cannot be evaluated.
    EXPECT_FALSE(absl::StartsWith(outcome->second, "cannot be evaluated"))
        << "ckpt-" << step << ": " << outcome->second;
    if (outcome->second == "evaluated") ++evaluated;
  }
  // The one that reached the target, and the final one.
  EXPECT_GE(evaluated, 2);
  EXPECT_EQ(outcomes.at(status.global_step()), "evaluated");
  EXPECT_EQ(status.last_eval_step(), status.global_step());
  EXPECT_GE(status.last_eval_metrics().at("accuracy"), 0.7) << status.ShortDebugString();

  // Retention caught up once nothing was held: the newest periodic one and
  // the final one at most.
  const std::set<int64_t> kept = CheckpointFolders(cluster_->checkpoint_root() + "/fast");
  EXPECT_LE(kept.size(), 2u) << absl::StrJoin(kept, ",");
  EXPECT_TRUE(kept.count(status.global_step())) << absl::StrJoin(kept, ",");
}

TEST_F(EvaluationTest, ContinuousEvalFollowsAModelDirToItsFinalCheckpoint) {
  // Training writes ckpt-100, 200, 300 (final) and keeps them all.
  const JobRecord trained = Run(R"pb(
    name: "trained"
    mode: JOB_MODE_TRAIN
    model { mlp { hidden_units: [ 32 ] } }
    train_data {
      fashion_mnist {}
      batch_size: 64
    }
    optimizer {
      adam {}
      learning_rate: 0.002
    }
    training { steps_per_loop: 10 }
    stop { max_steps: 300 }
    checkpoint { model_dir: "followed" every_steps: 100 max_to_keep: 0 }
  )pb");
  ASSERT_EQ(trained.final_status.state(), JOB_STATE_SUCCEEDED)
      << trained.final_status.ShortDebugString();
  const int64_t final_step = trained.final_status.global_step();

  const JobRecord evaluation = Run(R"pb(
    name: "follower"
    mode: JOB_MODE_CONTINUOUS_EVAL
    model { mlp { hidden_units: [ 32 ] } }
    train_data { fashion_mnist {} }
    eval_data {
      fashion_mnist {}
      batch_size: 1000
    }
    stop { max_steps: 300 }
    checkpoint { model_dir: "followed" }
    eval { throttle_secs: 0 }
  )pb");
  const JobStatus& status = evaluation.final_status;
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  const std::map<int64_t, std::string> outcomes = Outcomes(evaluation);
  // The final checkpoint is evaluated; every other one is evaluated or
  // skipped with a reason (an evaluator that finds several at once goes to
  // the newest).
  ASSERT_TRUE(outcomes.count(final_step)) << status.ShortDebugString();
  EXPECT_EQ(outcomes.at(final_step), "evaluated");
  for (int64_t step : CheckpointFolders(cluster_->checkpoint_root() + "/followed")) {
    EXPECT_TRUE(outcomes.count(step)) << "ckpt-" << step << " not accounted for";
  }
  EXPECT_EQ(status.last_eval_step(), final_step);
  EXPECT_TRUE(status.last_eval_metrics().contains("accuracy")) << status.ShortDebugString();
}

}  // namespace
}  // namespace pstrain
