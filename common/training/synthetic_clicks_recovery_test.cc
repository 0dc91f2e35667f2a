// Logistic regression trained on synthetic click logs must recover the
// logistic model the clicks were drawn from.
//
// Stated tolerance: the model can move a constant between one field's
// weights and the bias without changing any prediction, so weights are
// compared after subtracting each field's mean (the same for true and
// learned weights). Every id seen at least 2000 times must then be within
// 0.15 of its true weight, all ids on average within 0.06, and the bias plus
// the field means within 0.1 of the true ones. With 150,000 examples the
// rarest such id has a standard error of about 0.06.

#include <cmath>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/data/synthetic_clicks.h"
#include "common/training/local_trainer.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

constexpr int kExamples = 150000;
constexpr int kFields = 4;
constexpr int kVocabulary = 40;

TEST(SyntheticClicksRecoveryTest, LogisticRegressionRecoversTheTrueWeights) {
  const std::string data =
      absl::StrCat("synthetic_clicks { num_examples: ", kExamples, " num_fields: ", kFields,
                   " vocabulary_per_field: ", kVocabulary, " seed: 17 }");
  auto raw = ParseJobSpecText(absl::StrCat(R"(
    mode: JOB_MODE_TRAIN
    model { logistic_regression {} }
    train_data { )",
                                           data, R"( batch_size: 200 epochs: 4 }
    optimizer { adagrad {} learning_rate: 0.2 }
    checkpoint { model_dir: "/tmp/unused" }
  )"));
  ASSERT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto trainer = LocalTrainer::Create(*spec, {});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, STOP_REASON_END_OF_DATA);

  // The same data, to know the truth and how often each id occurs.
  auto clicks = SyntheticClicks::Create(spec->train_data().synthetic_clicks());
  ASSERT_TRUE(clicks.ok());
  std::vector<int64_t> all(kExamples);
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch batch;
  ASSERT_TRUE((*clicks)->Fill(all, &batch).ok());
  std::vector<int64_t> counts(kFields * kVocabulary, 0);
  for (int64_t id : batch.sparse_ids) ++counts[id];

  const VariableStore& variables = (*trainer)->variables();
  const std::vector<float>& truth = (*clicks)->true_weights();
  std::vector<double> learned(truth.size());
  for (size_t id = 0; id < truth.size(); ++id) {
    auto row = variables.Row("linear/weights", static_cast<int64_t>(id));
    ASSERT_TRUE(row.ok()) << row.status();
    learned[id] = (*row)[0];
  }
  double true_offset = (*clicks)->true_bias();
  double learned_offset = variables.dense("linear/bias")->data<float>()[0];
  double total_error = 0;
  int checked = 0;
  for (int f = 0; f < kFields; ++f) {
    double true_mean = 0, learned_mean = 0;
    for (int r = 0; r < kVocabulary; ++r) {
      true_mean += truth[f * kVocabulary + r] / kVocabulary;
      learned_mean += learned[f * kVocabulary + r] / kVocabulary;
    }
    true_offset += true_mean;
    learned_offset += learned_mean;
    for (int r = 0; r < kVocabulary; ++r) {
      const int id = f * kVocabulary + r;
      const double error = std::abs((learned[id] - learned_mean) - (truth[id] - true_mean));
      total_error += error;
      if (counts[id] >= 2000) {
        ++checked;
        EXPECT_LT(error, 0.15) << "id " << id << " seen " << counts[id] << " times: learned "
                               << learned[id] - learned_mean << ", true " << truth[id] - true_mean;
      }
    }
  }
  // Zipf's head: at least the 12 most frequent ids of every field.
  EXPECT_GE(checked, kFields * 12);
  EXPECT_LT(total_error / truth.size(), 0.06);
  EXPECT_NEAR(learned_offset, true_offset, 0.1);
}

}  // namespace
}  // namespace pstrain
