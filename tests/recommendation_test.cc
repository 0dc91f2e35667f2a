// The recommendation models the field trains on parameter servers, on a
// cluster of two parameter servers and two workers: the built-in DLRM
// (examples/criteo_dlrm.pbtxt), the same network brought from PyTorch as
// an ONNX graph of two inputs (examples/criteo_dlrm_pytorch.pbtxt), and
// wide-and-deep (examples/criteo_wide_and_deep.pbtxt), each on the same
// Criteo-format logs whose true model has pairwise interactions between
// categories (make-criteo-logs --criteo_interaction): dot products of
// embeddings learn them, a weight per category and an MLP over the
// embeddings side by side learn them less well.

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"
#include "tests/pstrain_command.h"

namespace pstrain {
namespace {

using testing_cluster::ClusterTest;

// What the tests ask of the models on these logs (figures at the tests).
// Each DLRM this close to the AUC of the true model, which the test split's
// labels were drawn from; the two DLRMs, started alike, this close to each
// other; wide-and-deep at least this far below each. In train-local, three
// orders of the data took each DLRM to 0.8417 to 0.8448 (0.0031 apart)
// against the true 0.8500, wide-and-deep to 0.8235.
constexpr double kDlrmShortOfTruth = 0.01;
constexpr double kDlrmsApart = 0.005;
constexpr double kWideAndDeepBehind = 0.01;
// The budget of every run: sync rounds of two batches of 256, one pass
// over the training logs, at a learning rate that decays from this.
constexpr int kRounds = 1500;
constexpr char kLearningRate[] = "0.006";

// The logs of every test of the suite (each shard writes its own copy).
struct Logs {
  std::string dir;
  double true_auc = 0;
};

const Logs& InteractionLogs() {
  static const Logs* logs = [] {
    const std::string dir = ::testing::TempDir() + "/criteo_interactions";
    return new Logs{
        dir, MakeCriteoLogs(
                 dir, {"--criteo_train_examples=768000", "--criteo_test_examples=20000",
                       "--criteo_categories=20", "--criteo_interaction=1.5", "--criteo_gzip"})};
  }();
  return *logs;
}

class RecommendationTest : public ClusterTest {
 protected:
  RecommendationTest() : ClusterTest(2, 2) {}

  // examples/`file` on the interaction logs, for the budget above (the
  // training logs streamed when `streamed`); its final test AUC.
  double TrainExample(const std::string& file, bool streamed) {
    const Logs& logs = InteractionLogs();
    std::stringstream example;
    example << std::ifstream("examples/" + file).rdbuf();
    const std::string steps = absl::StrCat(kRounds);
    const std::vector<std::pair<std::string, std::string>> changes = {
        {"criteo { paths: \"/tmp/pstrain/criteo/train.tsv\" }",
         absl::StrCat("criteo { paths: \"", logs.dir, "/train.tsv.gz\" }",
                      streamed ? " read_mode: READ_MODE_STREAMED" : "")},
        {"\"/tmp/pstrain/criteo/test.tsv\"", absl::StrCat("\"", logs.dir, "/test.tsv.gz\"")},
        // Sync, every worker in each round: each run ends where the last
        // did, as async runs do not on a loaded machine (the built-in DLRM
        // reached 0.741 to 0.768 in three async runs).
        {"training { update_mode: UPDATE_MODE_ASYNC }",
         "training { update_mode: UPDATE_MODE_SYNC }"},
        {"max_steps: 4000", "max_steps: " + steps},
        {"decay_steps: 4000", "decay_steps: " + steps},
        {"learning_rate: 0.003", absl::StrCat("learning_rate: ", kLearningRate)}};
    for (const auto& [from, to] : changes) {
      EXPECT_NE(example.str().find(from), std::string::npos) << from << " in " << file;
    }
    absl::StatusOr<std::string> job_id =
        cluster_->Submit(absl::StrReplaceAll(example.str(), changes));
    EXPECT_TRUE(job_id.ok()) << job_id.status();
    if (!job_id.ok()) return 0;
    const JobStatus status = cluster_->Follow(*job_id).final_status;
    EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
    auto auc = status.last_eval_metrics().find("auc");
    if (auc == status.last_eval_metrics().end()) {
      ADD_FAILURE() << "no final AUC: " << status.ShortDebugString();
      return 0;
    }
    std::cout << file << ": test AUC " << auc->second << " at step " << status.global_step()
              << "; the true model's " << logs.true_auc << "\n";
    return auc->second;
  }
};

// One pass over 768,000 lines in memory. Figures of one run of the suite:
// the true model 0.8500, the built-in DLRM 0.8446, PyTorch's 0.8425,
// wide-and-deep 0.8249; streamed, the built-in 0.8421 and PyTorch's 0.8426.
TEST_F(RecommendationTest, DlrmsFindTheInteractionsWideAndDeepMisses) {
  const double truth = InteractionLogs().true_auc;
  const double wide_and_deep = TrainExample("criteo_wide_and_deep.pbtxt", /*streamed=*/false);
  const double built_in = TrainExample("criteo_dlrm.pbtxt", /*streamed=*/false);
  const double pytorch = TrainExample("criteo_dlrm_pytorch.pbtxt", /*streamed=*/false);
  EXPECT_GE(built_in, truth - kDlrmShortOfTruth);
  EXPECT_GE(pytorch, truth - kDlrmShortOfTruth);
  EXPECT_NEAR(pytorch, built_in, kDlrmsApart);
  EXPECT_LE(wide_and_deep, std::min(built_in, pytorch) - kWideAndDeepBehind);
  for (double auc : {wide_and_deep, built_in, pytorch}) {
    EXPECT_LE(auc, truth + 0.005);  // none beats the model that drew the labels
  }
}

// Each DLRM reading ids and counts together from gzipped logs streamed
// through their access points, to the same AUC as in memory.
TEST_F(RecommendationTest, BuiltInDlrmTrainsOnStreamedGzippedLogs) {
  const double auc = TrainExample("criteo_dlrm.pbtxt", /*streamed=*/true);
  EXPECT_GE(auc, InteractionLogs().true_auc - kDlrmShortOfTruth);
  EXPECT_LE(auc, InteractionLogs().true_auc + 0.005);
}

TEST_F(RecommendationTest, DlrmFromPyTorchTrainsOnStreamedGzippedLogs) {
  const double auc = TrainExample("criteo_dlrm_pytorch.pbtxt", /*streamed=*/true);
  EXPECT_GE(auc, InteractionLogs().true_auc - kDlrmShortOfTruth);
  EXPECT_LE(auc, InteractionLogs().true_auc + 0.005);
}

}  // namespace
}  // namespace pstrain
