// Clipping by the global norm on several shards, step by step: the same
// job, with a clip_norm that every step's gradient exceeds, trained by a
// one-worker sync cluster with 2 parameter servers (coordinator, shards and
// worker as processes on loopback) and by `pstrain train-local`, holds the
// same parameters after each of its first steps. The job is logistic
// regression, whose table's rows are spread over both shards by id and
// whose bias sits on one: a shard clipping its slice of a push by the
// slice's own norm, as shards once did, would not give train-local's
// update, and the test shows by how much.
//
// Each step count is a job of its own (max_steps 1, 2, ...) whose final
// checkpoint is compared: a sync cluster takes its final checkpoint at the
// same step as train-local, its periodic ones one step earlier.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/checkpoint/file_path.h"
#include "common/placement/row_placement.h"
#include "gtest/gtest.h"
#include "tests/checkpoint_parameters.h"
#include "tests/cluster_fixture.h"
#include "tests/pstrain_command.h"

namespace pstrain {
namespace {

using testing_checkpoints::CheckpointParameters;
using testing_checkpoints::ReadNewestCheckpoint;
using testing_cluster::TestCluster;

constexpr int kSteps = 4;
constexpr int kNumShards = 2;
constexpr double kLearningRate = 0.5;
constexpr double kClipNorm = 0.01;
// Float tolerance of two trainers' parameters after a few steps.
constexpr double kTolerance = 1e-6;

// Plain SGD, so that a step's update is minus the learning rate times the
// gradient as clipped; data in order, the same batches for both trainers.
std::string Job(const std::string& name, int64_t max_steps, double clip_norm) {
  return absl::StrReplaceAll(R"pb(
                               name: "$NAME"
                               mode: JOB_MODE_TRAIN
                               model { logistic_regression {} }
                               train_data {
                                 synthetic_clicks { num_examples: 4096 seed: 5 }
                                 batch_size: 64
                                 shuffle: false
                               }
                               optimizer {
                                 sgd {}
                                 learning_rate: $LR
                                 clip_norm: $CLIP
                               }
                               training { update_mode: UPDATE_MODE_SYNC seed: 7 steps_per_loop: 1 }
                               stop { max_steps: $STEPS }
                               checkpoint { model_dir: "$NAME" }
                             )pb",
                             {{"$NAME", name},
                              {"$LR", absl::StrCat(kLearningRate)},
                              {"$CLIP", absl::StrCat(clip_norm)},
                              {"$STEPS", absl::StrCat(max_steps)}});
}

// Every trained float of a checkpoint by where it lives: "bias[0]",
// "linear/weights row 17 [0]", with the shard that holds it.
struct Parameter {
  std::string name;
  int shard = 0;
  double value = 0;
};

std::vector<Parameter> Flatten(const CheckpointParameters& checkpoint) {
  std::vector<Parameter> out;
  for (const auto& [name, values] : checkpoint.values) {
    auto ids = checkpoint.row_ids.find(name);
    if (ids == checkpoint.row_ids.end()) {
      for (size_t i = 0; i < values.size(); ++i) {
        out.push_back({absl::StrCat(name, "[", i, "]"), checkpoint.dense_shard.at(name), values[i]});
      }
      continue;
    }
    const size_t width = values.size() / std::max<size_t>(1, ids->second.size());
    for (size_t r = 0; r < ids->second.size(); ++r) {
      const int64_t id = ids->second[r];
      for (size_t j = 0; j < width; ++j) {
        out.push_back({absl::StrCat(name, " row ", id, " [", j, "]"), RowShard(id, kNumShards),
                       values[r * width + j]});
      }
    }
  }
  return out;
}

// `of` restricted to the parameters `in` holds too (train-local holds the
// rows it read, a shard every row of a fixed table), in `in`'s order.
std::vector<Parameter> Matching(const std::vector<Parameter>& of, const std::vector<Parameter>& in) {
  std::vector<Parameter> out;
  for (const Parameter& p : in) {
    auto it = std::find_if(of.begin(), of.end(), [&](const Parameter& q) { return q.name == p.name; });
    if (it != of.end()) out.push_back(*it);
  }
  return out;
}

// The largest difference between two lists of the same parameters, beyond
// the tolerance's relative share; its parameter in *where.
double LargestExcess(const std::vector<Parameter>& a, const std::vector<Parameter>& b,
                     std::string* where) {
  double largest = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double excess = std::abs(a[i].value - b[i].value) - 1e-5 * std::abs(b[i].value);
    if (excess > largest) {
      largest = excess;
      *where = a[i].name;
    }
  }
  return largest;
}

// The L2 norm of b - a. The linear model starts from zeros: a row that a
// lacks had not been read yet, and still held its initial 0.
double NormOfChange(const std::vector<Parameter>& a, const std::vector<Parameter>& b) {
  std::map<std::string, double> before;
  for (const Parameter& p : a) before[p.name] = p.value;
  double sum = 0;
  for (const Parameter& p : b) {
    auto it = before.find(p.name);
    sum += std::pow(p.value - (it == before.end() ? 0.0 : it->second), 2);
  }
  return std::sqrt(sum);
}

class GlobalClippingTest : public testing_cluster::SharedClusterTest<GlobalClippingTest> {
 protected:
  static void SetUpTestSuite() {
    LocalClusterOptions options;
    options.num_ps = kNumShards;
    options.num_workers = 1;
    options.evaluator = false;
    if (!StartSharedCluster("global_clipping", options)) return;
  }

  // The final parameters of job `name` trained on the cluster.
  static std::vector<Parameter> OnCluster(const std::string& name, int64_t max_steps) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(Job(name, max_steps, kClipNorm));
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return {};
    const JobStatus status = cluster_->Follow(*job_id).final_status;
    EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
    return Read(JoinPath(cluster_->checkpoint_root(), name), max_steps);
  }

  // The final parameters of job `name` trained by `pstrain train-local`.
  static std::vector<Parameter> Locally(const std::string& name, int64_t max_steps,
                                        double clip_norm) {
    const std::string dir = JoinPath(cluster_->checkpoint_root(), name);
    const std::string spec_path = dir + ".pbtxt";
    std::ofstream(spec_path) << Job(name, max_steps, clip_norm);
    ExitStatus exit;
    const std::string output = RunPstrain({"train-local", spec_path, "--model_dir=" + dir}, &exit);
    EXPECT_TRUE(exit.ok()) << exit.ToString() << "\n" << output;
    return Read(dir, max_steps);
  }

  static std::vector<Parameter> Read(const std::string& model_dir, int64_t step) {
    absl::StatusOr<CheckpointParameters> checkpoint = ReadNewestCheckpoint(model_dir);
    EXPECT_TRUE(checkpoint.ok()) << checkpoint.status();
    if (!checkpoint.ok()) return {};
    EXPECT_EQ(checkpoint->global_step, step) << checkpoint->path;
    return Flatten(*checkpoint);
  }

};


TEST_F(GlobalClippingTest, TwoShardsClipAsTrainLocalStepByStep) {
  std::vector<Parameter> previous;  // every row the cluster held, a step earlier
  for (int step = 1; step <= kSteps; ++step) {
    SCOPED_TRACE(absl::StrCat("after step ", step));
    const std::vector<Parameter> local = Locally(absl::StrCat("local_", step), step, kClipNorm);
    ASSERT_FALSE(local.empty());
    const std::vector<Parameter> all = OnCluster(absl::StrCat("cluster_", step), step);
    const std::vector<Parameter> clustered = Matching(all, local);
    ASSERT_EQ(clustered.size(), local.size()) << "the cluster lacks parameters train-local has";
    std::string where;
    EXPECT_LE(LargestExcess(clustered, local, &where), kTolerance) << where;
    // The step clipped: its update's norm is the learning rate times
    // clip_norm (an unclipped one is shorter).
    EXPECT_NEAR(NormOfChange(previous, all),
                kLearningRate * kClipNorm, kLearningRate * kClipNorm * 1e-3);
    previous = all;
  }
}

// Not vacuous: clipping each shard's slice by its own norm gives another
// first step, further from train-local's than the tolerance. From the
// first step with and without clipping (the same start, the same batch):
// unclipped - clipped = -lr g (1 - c / |g|), and its norm lr (|g| - c).
TEST_F(GlobalClippingTest, ClippingEachShardsSliceWouldDifferBeyondTheTolerance) {
  const std::vector<Parameter> clipped = Locally("first_clipped", 1, kClipNorm);
  const std::vector<Parameter> unclipped = Matching(Locally("first_unclipped", 1, 0), clipped);
  ASSERT_EQ(unclipped.size(), clipped.size());
  const double difference = NormOfChange(clipped, unclipped);
  const double norm = difference / kLearningRate + kClipNorm;
  ASSERT_GT(norm, kClipNorm * 2) << "the first step barely clips";
  const double rest = 1 - kClipNorm / norm;
  std::vector<double> gradient(clipped.size());
  std::vector<double> slice_norms(kNumShards, 0);
  for (size_t i = 0; i < clipped.size(); ++i) {
    gradient[i] = (clipped[i].value - unclipped[i].value) / (kLearningRate * rest);
    slice_norms[clipped[i].shard] += gradient[i] * gradient[i];
  }
  for (double& n : slice_norms) n = std::sqrt(n);
  // Start + per-slice clipped update, against train-local's clipped step.
  double largest = 0;
  for (size_t i = 0; i < clipped.size(); ++i) {
    const double start = unclipped[i].value + kLearningRate * gradient[i];
    const double n = slice_norms[clipped[i].shard];
    const double per_slice = start - kLearningRate * gradient[i] * std::min(1.0, kClipNorm / n);
    largest = std::max(largest, std::abs(per_slice - clipped[i].value));
  }
  EXPECT_GT(largest, 100 * kTolerance);
  for (int s = 0; s < kNumShards; ++s) EXPECT_GT(slice_norms[s], 0) << "shard " << s;
}

}  // namespace
}  // namespace pstrain
