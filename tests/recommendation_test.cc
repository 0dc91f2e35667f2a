// The recommendation models the field trains on parameter servers, on a
// cluster of two parameter servers and two workers: the built-in DLRM
// (examples/criteo_dlrm.pbtxt), the same network brought from PyTorch as
// an ONNX graph of two inputs (examples/criteo_dlrm_pytorch.pbtxt), and
// wide-and-deep (examples/criteo_wide_and_deep.pbtxt), each on the same
// Criteo-format logs whose true model has pairwise interactions between
// categories (make-criteo-logs --criteo_interaction): dot products of
// embeddings learn them, a weight per category and an MLP over the
// embeddings side by side learn them less well.

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

// Each DLRM comes at least level with wide-and-deep, and the two DLRMs this
// close to each other (figures below). The margins are thin at this budget;
// sync rounds make each run end where the last did on one machine, but a
// CPU of other vector units sums in another order.
constexpr double kDlrmLead = 0.0;
constexpr double kDlrmsApart = 0.04;

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
                 dir, {"--criteo_train_examples=200000", "--criteo_test_examples=20000",
                       "--criteo_categories=300", "--criteo_interaction=1.5", "--criteo_gzip"})};
  }();
  return *logs;
}

class RecommendationTest : public ClusterTest {
 protected:
  RecommendationTest() : ClusterTest(2, 2) {}

  // examples/`file` on the interaction logs, for `steps` steps (the
  // training logs streamed when `streamed`); its final test AUC.
  double TrainExample(const std::string& file, const std::string& model_dir, int steps,
                      bool streamed) {
    const Logs& logs = InteractionLogs();
    std::stringstream example;
    example << std::ifstream("examples/" + file).rdbuf();
    const std::string steps_text = absl::StrCat(steps);
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
        {"max_steps: 4000", "max_steps: " + steps_text},
        {"decay_steps: 4000", "decay_steps: " + steps_text},
        {"/tmp/pstrain/" + model_dir, model_dir}};
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

// 750 sync rounds of two batches of 256 (two passes over 200,000 lines), in
// memory: wide-and-deep 0.7303, the built-in DLRM 0.7397, PyTorch's 0.7637,
// against the true model's 0.849 (logistic regression reaches 0.733 on such
// logs, criteo_logs_test). The DLRMs find some of the interactions, far
// from all of them in two passes, and the built-in one less than PyTorch's
// here: the two draw their first weights differently. Async, the same
// steps gave the built-in DLRM 0.741 to 0.768 from run to run, and
// wide-and-deep 0.730 to 0.731.
TEST_F(RecommendationTest, DlrmsFindTheInteractionsWideAndDeepMisses) {
  const double wide_and_deep =
      TrainExample("criteo_wide_and_deep.pbtxt", "criteo_wide_and_deep", 750, false);
  const double built_in = TrainExample("criteo_dlrm.pbtxt", "criteo_dlrm", 750, false);
  const double pytorch =
      TrainExample("criteo_dlrm_pytorch.pbtxt", "criteo_dlrm_pytorch", 750, false);
  EXPECT_GE(built_in, wide_and_deep + kDlrmLead);
  EXPECT_GE(pytorch, wide_and_deep + kDlrmLead);
  EXPECT_NEAR(pytorch, built_in, kDlrmsApart);
  for (double auc : {wide_and_deep, built_in, pytorch}) {
    EXPECT_LE(auc,
              InteractionLogs().true_auc + 0.005);  // none beats the model that drew the labels
  }
}

// The PyTorch DLRM reading ids and counts together from gzipped logs
// streamed through their access points.
TEST_F(RecommendationTest, DlrmFromPyTorchTrainsOnStreamedGzippedLogs) {
  const double auc =
      TrainExample("criteo_dlrm_pytorch.pbtxt", "criteo_dlrm_pytorch", 750, /*streamed=*/true);
  // 0.7397 (async: 0.723 and 0.734); a model that learned nothing scores
  // 0.5.
  EXPECT_GE(auc, 0.70);
  EXPECT_LE(auc, InteractionLogs().true_auc + 0.005);
}

}  // namespace
}  // namespace pstrain
