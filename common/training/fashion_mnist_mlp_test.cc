// The MLP trained in one process on the real Fashion-MNIST (Debian's
// dataset-fashion-mnist) must reach 85% test accuracy: the end-to-end check
// that layers, gradients, optimizer, data and metrics all work together.

#include <string>

#include "absl/strings/str_cat.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/training/local_trainer.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(FashionMnistMlpTest, ReachesEightyFivePercent) {
  auto raw = ParseJobSpecText(R"(
    mode: JOB_MODE_TRAIN_AND_EVAL
    model { mlp { hidden_units: [256, 128] activation: ACTIVATION_RELU } }
    train_data { fashion_mnist {} batch_size: 128 epochs: 4 shuffle_seed: 1 }
    eval_data { fashion_mnist {} batch_size: 1000 }
    optimizer { adam {} learning_rate: 0.001 }
    training { seed: 1 steps_per_loop: 200 }
    checkpoint { model_dir: "/tmp/unused" }
    eval { metrics: ["loss", "accuracy"] }
  )");
  ASSERT_TRUE(raw.ok()) << raw.status();
  auto spec = PrepareJobSpec(*raw);
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto trainer = LocalTrainer::Create(*spec, {});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  EXPECT_EQ((*trainer)->train_info().num_examples, 60000);
  auto result = (*trainer)->Run();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stop_reason, STOP_REASON_END_OF_DATA);
  EXPECT_EQ(result->global_step, 4 * 469);  // 468 full batches and one of 96
  const double accuracy = result->eval_metrics.at("accuracy");
  RecordProperty("accuracy", absl::StrCat(accuracy));
  RecordProperty("examples_per_sec", absl::StrCat(result->examples_per_sec));
  EXPECT_GE(accuracy, 0.85);
  EXPECT_LT(result->eval_metrics.at("loss"), 0.45);
}

}  // namespace
}  // namespace pstrain
