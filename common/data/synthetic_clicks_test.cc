#include "common/data/synthetic_clicks.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/config/job_spec_defaults.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

// `clicks` with its defaults, as OpenExampleSource hands it over.
SyntheticClicksSource Filled(const SyntheticClicksSource& clicks) {
  DataSpec data;
  *data.mutable_synthetic_clicks() = clicks;
  FillDataDefaults(&data, PassMode::kTrain);
  return data.synthetic_clicks();
}

std::unique_ptr<SyntheticClicks> Make(int64_t n, uint64_t seed) {
  SyntheticClicksSource spec;
  spec.set_num_examples(n);
  spec.set_num_fields(3);
  spec.set_vocabulary_per_field(50);
  spec.set_seed(seed);
  auto source = SyntheticClicks::Create(Filled(spec));
  EXPECT_TRUE(source.ok()) << source.status();
  return std::move(source).value();
}

TEST(SyntheticClicksTest, OneZipfIdPerFieldAndReproducible) {
  auto source = Make(20000, 7);
  EXPECT_EQ(source->info().sparse_dim, 150);
  EXPECT_EQ(source->info().num_fields, 3);
  std::vector<int64_t> all(20000);
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch batch;
  ASSERT_TRUE(source->Fill(all, &batch).ok());
  ASSERT_EQ(batch.sparse_ids.size(), 60000u);
  std::vector<int64_t> rank_counts(50, 0);
  for (int64_t i = 0; i < 20000; ++i) {
    for (int f = 0; f < 3; ++f) {
      const int64_t id = batch.sparse_ids[i * 3 + f];
      ASSERT_GE(id, f * 50);
      ASSERT_LT(id, (f + 1) * 50);
      ++rank_counts[id - f * 50];
    }
  }
  // Zipf with exponent 1.1: rank 0 is 2^1.1 times as frequent as rank 1.
  EXPECT_NEAR(static_cast<double>(rank_counts[0]) / rank_counts[1], std::pow(2.0, 1.1), 0.15);
  EXPECT_GT(rank_counts[1], rank_counts[10]);

  // Random access: an example reads the same alone as in a batch.
  ExampleBatch one;
  ASSERT_TRUE(source->Fill({12345}, &one).ok());
  EXPECT_EQ(one.sparse_ids[1], batch.sparse_ids[12345 * 3 + 1]);
  EXPECT_EQ(one.labels[0], batch.labels[12345]);
  EXPECT_EQ(source->Fill({20000}, &one).code(), absl::StatusCode::kOutOfRange);
}

TEST(SyntheticClicksTest, LabelsFollowTheTrueModel) {
  auto source = Make(40000, 3);
  std::vector<int64_t> all(40000);
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch batch;
  ASSERT_TRUE(source->Fill(all, &batch).ok());
  // Mean label equals the mean true click probability, within sampling error.
  double expected = 0, observed = 0;
  for (int64_t i = 0; i < 40000; ++i) {
    double logit = source->true_bias();
    for (int f = 0; f < 3; ++f) logit += source->true_weights()[batch.sparse_ids[i * 3 + f]];
    expected += 1 / (1 + std::exp(-logit));
    observed += batch.labels[i];
  }
  EXPECT_NEAR(observed / 40000, expected / 40000, 0.01);
  // Another seed, another true model.
  EXPECT_NE(Make(10, 4)->true_weights(), source->true_weights());
}

TEST(SyntheticClicksTest, TheTestSplitHasOtherExamplesOfTheSameTrueModel) {
  SyntheticClicksSource spec;
  spec.set_num_examples(1000);
  spec.set_seed(9);
  auto train = SyntheticClicks::Create(Filled(spec), /*test=*/false);
  auto test = SyntheticClicks::Create(Filled(spec), /*test=*/true);
  ASSERT_TRUE(train.ok() && test.ok());
  EXPECT_EQ((*train)->true_weights(), (*test)->true_weights());
  std::vector<int64_t> all(1000);
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch train_batch, test_batch;
  ASSERT_TRUE((*train)->Fill(all, &train_batch).ok());
  ASSERT_TRUE((*test)->Fill(all, &test_batch).ok());
  int same = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    same += std::equal(train_batch.sparse_ids.begin() + i * 8,
                       train_batch.sparse_ids.begin() + (i + 1) * 8,
                       test_batch.sparse_ids.begin() + i * 8);
  }
  // Zipf ids collide now and then; whole examples rarely do.
  EXPECT_LT(same, 100);
}

TEST(SyntheticClicksTest, DenseFeaturesCarryTheirOwnTrueWeights) {
  SyntheticClicksSource spec;
  spec.set_num_examples(40000);
  spec.set_num_fields(3);
  spec.set_vocabulary_per_field(50);
  spec.set_seed(5);
  auto plain = SyntheticClicks::Create(Filled(spec));
  spec.set_dense_features(4);
  auto dense = SyntheticClicks::Create(Filled(spec));
  auto again = SyntheticClicks::Create(Filled(spec));
  ASSERT_TRUE(plain.ok() && dense.ok() && again.ok());
  EXPECT_EQ((*plain)->info().dense_dim, 0);
  EXPECT_EQ((*dense)->info().dense_dim, 4);
  EXPECT_EQ((*dense)->info().num_fields, 3);
  ASSERT_EQ((*dense)->true_dense_weights().size(), 4u);
  EXPECT_TRUE((*plain)->true_dense_weights().empty());
  EXPECT_EQ((*dense)->true_weights(), (*plain)->true_weights());

  std::vector<int64_t> all(40000);
  std::iota(all.begin(), all.end(), 0);
  ExampleBatch with, without, twice;
  ASSERT_TRUE((*dense)->Fill(all, &with).ok());
  ASSERT_TRUE((*plain)->Fill(all, &without).ok());
  ASSERT_TRUE((*again)->Fill(all, &twice).ok());
  EXPECT_EQ(without.dense_dim(), 0);
  ASSERT_EQ(with.dense_dim(), 4);
  ASSERT_EQ(with.dense.shape(), Shape({40000, 4}));
  // The ids are those without dense features; the seed fixes everything.
  EXPECT_EQ(with.sparse_ids, without.sparse_ids);
  EXPECT_EQ(with.labels, twice.labels);
  const float* x = with.dense.data<float>();
  EXPECT_TRUE(std::equal(x, x + 160000, twice.dense.data<float>()));

  // Standard normal features, and labels that follow the whole true model.
  double sum = 0, squares = 0, expected = 0, observed = 0;
  for (int64_t i = 0; i < 40000; ++i) {
    double logit = (*dense)->true_bias();
    for (int f = 0; f < 3; ++f) logit += (*dense)->true_weights()[with.sparse_ids[i * 3 + f]];
    for (int j = 0; j < 4; ++j) {
      sum += x[i * 4 + j];
      squares += x[i * 4 + j] * x[i * 4 + j];
      logit += (*dense)->true_dense_weights()[j] * x[i * 4 + j];
    }
    expected += 1 / (1 + std::exp(-logit));
    observed += with.labels[i];
  }
  EXPECT_NEAR(sum / 160000, 0, 0.01);
  EXPECT_NEAR(squares / 160000, 1, 0.02);
  EXPECT_NEAR(observed / 40000, expected / 40000, 0.01);

  // Random access, dense features included.
  ExampleBatch one;
  ASSERT_TRUE((*dense)->Fill({31337}, &one).ok());
  EXPECT_TRUE(std::equal(one.dense.data<float>(), one.dense.data<float>() + 4, x + 31337 * 4));
  EXPECT_EQ(one.labels[0], with.labels[31337]);

  // The test split: other features, the same true model.
  auto test = SyntheticClicks::Create(Filled(spec), /*test=*/true);
  ASSERT_TRUE(test.ok());
  EXPECT_EQ((*test)->true_dense_weights(), (*dense)->true_dense_weights());
  ExampleBatch test_one;
  ASSERT_TRUE((*test)->Fill({31337}, &test_one).ok());
  EXPECT_NE(test_one.dense.data<float>()[0], one.dense.data<float>()[0]);
}

// The generator refuses what the validation refuses, for a caller that
// skips it.
TEST(SyntheticClicksTest, RefusesNegativeDenseFeatures) {
  SyntheticClicksSource spec;
  spec.set_dense_features(-1);
  const auto source = SyntheticClicks::Create(Filled(spec));
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(source.status().message().find("dense_features"), std::string::npos);
}

// Out-of-range fields are refused by OpenExampleSource (data_source_test).
TEST(SyntheticClicksTest, RefusesAVocabularyTooLargeToTabulate) {
  SyntheticClicksSource spec;
  spec.set_vocabulary_per_field(10'000'001);
  const auto source = SyntheticClicks::Create(Filled(spec));
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(source.status().message().find("vocabulary_per_field"), std::string::npos);
}

// A caller that skips the fill gets an error, not a generator of other data
// (no Zipf skew at an exponent of 0, so every id turns up in training).
TEST(SyntheticClicksTest, RefusesASpecNobodyFilled) {
  SyntheticClicksSource spec;
  spec.set_num_examples(100);
  spec.set_num_fields(3);
  spec.set_vocabulary_per_field(50);
  const auto source = SyntheticClicks::Create(spec);
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(source.status().message().find("zipf_exponent 0"), std::string::npos)
      << source.status();
  EXPECT_TRUE(SyntheticClicks::Create(Filled(spec)).ok());
}

}  // namespace
}  // namespace pstrain
