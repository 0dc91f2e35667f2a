#include "common/data/synthetic_clicks.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "common/random/split_mix.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr int64_t kMaxVocabulary = 10'000'000;
constexpr int32_t kMaxDenseFeatures = 100'000;

// A uniform double in [0, 1) from 53 random bits.
double Uniform(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// A standard normal from two draws of `state` (Box-Muller), advancing it:
// an example's features come from its own stream, not from a shared engine.
float Normal(uint64_t& state) {
  state = SplitMix64(state);
  const double radius = std::sqrt(-2 * std::log(1 - Uniform(state)));  // 1 - u is in (0, 1]
  state = SplitMix64(state);
  return static_cast<float>(radius * std::cos(2 * M_PI * Uniform(state)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SyntheticClicks>> SyntheticClicks::Create(
    const SyntheticClicksSource& spec, bool test) {
  const int64_t examples = spec.num_examples();
  const int32_t fields = spec.num_fields();
  const int64_t vocabulary = spec.vocabulary_per_field();
  const double exponent = spec.zipf_exponent();
  // A spec nobody filled would make a degenerate generator (no examples,
  // or ids drawn uniformly for a Zipf exponent of 0) without a word.
  if (examples <= 0 || fields <= 0 || vocabulary <= 0 || !(exponent > 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic_clicks is not filled and validated (num_examples ", examples, ", num_fields ",
        fields, ", vocabulary_per_field ", vocabulary, ", zipf_exponent ", exponent,
        "): FillDataDefaults and ValidateDataSpec come first"));
  }
  // The one limit of this generator rather than of the field: its table of
  // ranks.
  if (vocabulary > kMaxVocabulary) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic_clicks.vocabulary_per_field must be at most ", kMaxVocabulary, ", got ",
        vocabulary));
  }
  if (spec.dense_features() < 0 || spec.dense_features() > kMaxDenseFeatures) {
    return absl::InvalidArgumentError(
        absl::StrCat("synthetic_clicks.dense_features must be in [0, ", kMaxDenseFeatures,
                     "], got ", spec.dense_features()));
  }
  std::unique_ptr<SyntheticClicks> source(new SyntheticClicks());
  // The training split keeps the plain seed, so its examples stay those of
  // earlier versions; the test split's stream is a different one.
  source->example_seed_ = test ? SplitMix64(spec.seed() ^ 0x74657374ULL) : spec.seed();
  source->vocabulary_ = vocabulary;
  source->info_.num_examples = examples;
  source->info_.sparse_dim = fields * vocabulary;
  source->info_.num_fields = fields;
  source->info_.dense_dim = spec.dense_features();
  source->info_.num_classes = 2;
  source->rank_cdf_.resize(vocabulary);
  double total = 0;
  for (int64_t r = 0; r < vocabulary; ++r) {
    total += 1.0 / std::pow(static_cast<double>(r + 1), exponent);
    source->rank_cdf_[r] = total;
  }
  for (double& c : source->rank_cdf_) c /= total;
  std::mt19937_64 rng(SplitMix64(spec.seed() ^ 0x7275650aULL));
  std::normal_distribution<float> normal(0.0f, kTrueWeightStddev);
  source->true_weights_.resize(fields * vocabulary);
  for (float& w : source->true_weights_) w = normal(rng);
  // A stream of their own, so that the ids' weights stay those of a spec
  // without dense features.
  std::mt19937_64 dense_rng(SplitMix64(spec.seed() ^ 0x64656e7365ULL));
  source->true_dense_weights_.resize(spec.dense_features());
  for (float& w : source->true_dense_weights_) w = normal(dense_rng);
  return source;
}

absl::Status SyntheticClicks::Fill(absl::Span<const int64_t> indices, ExampleBatch* batch) const {
  const int64_t n = static_cast<int64_t>(indices.size());
  const int32_t fields = info_.num_fields;
  const int64_t dense_dim = info_.dense_dim;
  batch->size = n;
  if (dense_dim == 0) {
    batch->dense = Tensor();
  } else if (batch->dense.shape() != Shape({n, dense_dim}) ||
             batch->dense.dtype() != DATA_TYPE_FLOAT32) {
    ASSIGN_OR_RETURN(batch->dense,
                     Tensor::CreateUninitialized(DATA_TYPE_FLOAT32, Shape({n, dense_dim})));
  }
  float* dense = dense_dim > 0 ? batch->dense.data<float>() : nullptr;
  batch->labels.resize(n);
  batch->sparse_ids.resize(n * fields);
  batch->sparse_values.clear();
  batch->row_splits.resize(n + 1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t index = indices[i];
    if (index < 0 || index >= info_.num_examples) {
      return absl::OutOfRangeError(
          absl::StrCat("example ", index, " outside [0, ", info_.num_examples, ")"));
    }
    // Each example has its own stream: random access needs no state.
    uint64_t state = SplitMix64(example_seed_ ^ SplitMix64(static_cast<uint64_t>(index)));
    double logit = kTrueBias;
    for (int32_t f = 0; f < fields; ++f) {
      state = SplitMix64(state);
      const int64_t rank =
          std::lower_bound(rank_cdf_.begin(), rank_cdf_.end(), Uniform(state)) - rank_cdf_.begin();
      const int64_t id = f * vocabulary_ + std::min(rank, vocabulary_ - 1);
      batch->sparse_ids[i * fields + f] = id;
      logit += true_weights_[id];
    }
    // After the ids, so that they are those of the spec without dense
    // features.
    for (int64_t j = 0; j < dense_dim; ++j) {
      const float x = Normal(state);
      dense[i * dense_dim + j] = x;
      logit += true_dense_weights_[j] * x;
    }
    state = SplitMix64(state);
    batch->labels[i] = Uniform(state) < 1 / (1 + std::exp(-logit)) ? 1.0f : 0.0f;
    batch->row_splits[i] = i * fields;
  }
  batch->row_splits[n] = n * fields;
  return absl::OkStatus();
}

}  // namespace pstrain
