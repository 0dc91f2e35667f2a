#include "common/data/criteo_logs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/data/criteo_reader.h"
#include "common/data/output_file.h"
#include "common/random/split_mix.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr int64_t kMaxVocabulary = 10000000;
constexpr double kCategoryWeightStddev = 0.25;
constexpr double kIntegerWeightStddev = 0.15;
constexpr double kBias = -1.5;
constexpr double kMissingCategory = 0.05;
constexpr double kNegativeI2 = 0.05;
// The interaction term: pairs among the first columns, latent vectors of
// this rank, entries of this variance (dot products of variance 1).
constexpr int kInteractingFields = 8;
constexpr int kInteractionRank = 4;
constexpr double kLatentVariance = 0.5;
// Lines are written to the file in pieces of about this many bytes.
constexpr size_t kWriteBytes = 1 << 20;

// The true model, drawn from the seed alone.
struct TrueModel {
  // [field][rank], and each field's weight for a missing value.
  std::vector<std::vector<float>> category_weights;
  std::array<float, kCriteoCategoricalFeatures> missing_weights;
  std::array<float, kCriteoIntegerFeatures> integer_weights;
  std::array<double, kCriteoIntegerFeatures> log_count_means;
  std::array<double, kCriteoIntegerFeatures> missing_rates;
  // [field][rank * kInteractionRank + j] for the first kInteractingFields
  // columns; empty without the interaction term.
  std::vector<std::vector<float>> latents;
};

TrueModel DrawTrueModel(const CriteoLogsOptions& options) {
  std::mt19937_64 random(SplitMix64(options.seed ^ 0x63726974656f4d31ull));
  std::normal_distribution<float> category(0.0f, kCategoryWeightStddev);
  std::normal_distribution<float> integer(0.0f, kIntegerWeightStddev);
  TrueModel model;
  model.category_weights.resize(kCriteoCategoricalFeatures);
  for (int f = 0; f < kCriteoCategoricalFeatures; ++f) {
    model.category_weights[f].resize(options.vocabulary_per_field);
    for (float& w : model.category_weights[f]) w = category(random);
    model.missing_weights[f] = category(random);
  }
  for (int i = 0; i < kCriteoIntegerFeatures; ++i) {
    model.integer_weights[i] = integer(random);
    model.log_count_means[i] = 3.0 * i / (kCriteoIntegerFeatures - 1);
    model.missing_rates[i] =
        0.02 + 0.38 * ((i * 7) % kCriteoIntegerFeatures) / (kCriteoIntegerFeatures - 1);
  }
  if (options.interaction > 0) {
    // A stream of its own, so that the rest of the model is that without
    // the term.
    std::mt19937_64 latent_random(SplitMix64(options.seed ^ 0x696e7465726163ull));
    std::normal_distribution<float> latent(0.0f, std::sqrt(kLatentVariance));
    model.latents.resize(kInteractingFields);
    for (std::vector<float>& field : model.latents) {
      field.resize(options.vocabulary_per_field * kInteractionRank);
      for (float& u : field) u = latent(latent_random);
    }
  }
  return model;
}

// The interaction term of an example whose first columns have these ranks
// (-1: missing): the sum over pairs of dot products, as
// (|sum of u|^2 - sum of |u|^2) / 2, times strength / sqrt(pairs).
double InteractionTerm(const TrueModel& model, const std::array<int64_t, kInteractingFields>& ranks,
                       double strength) {
  std::array<double, kInteractionRank> sum{};
  double squares = 0;
  for (int f = 0; f < kInteractingFields; ++f) {
    if (ranks[f] < 0) continue;
    const float* u = &model.latents[f][ranks[f] * kInteractionRank];
    for (int j = 0; j < kInteractionRank; ++j) {
      sum[j] += u[j];
      squares += static_cast<double>(u[j]) * u[j];
    }
  }
  double pairs = -squares;
  for (double s : sum) pairs += s * s;
  constexpr int kPairs = kInteractingFields * (kInteractingFields - 1) / 2;
  return strength / std::sqrt(static_cast<double>(kPairs)) * pairs / 2;
}

// The hex category of `rank` in `field`: 32 bits of a hash, as released.
uint32_t CategoryCode(uint64_t seed, int field, int64_t rank) {
  return static_cast<uint32_t>(SplitMix64(SplitMix64(seed) ^ (static_cast<uint64_t>(field) << 40) ^
                                          static_cast<uint64_t>(rank)));
}

}  // namespace

absl::Status WriteCriteoLogs(Env& env, const std::string& path, const CriteoLogsOptions& options,
                             CriteoLogsTruth* truth) {
  if (options.num_examples < 1 || options.vocabulary_per_field < 1 ||
      options.vocabulary_per_field > kMaxVocabulary) {
    return absl::InvalidArgumentError(
        absl::StrCat("Criteo logs need at least one example and 1 to ", kMaxVocabulary,
                     " categories per field, got ", options.num_examples, " and ",
                     options.vocabulary_per_field));
  }
  if (!(options.zipf_exponent > 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the Zipf exponent must be > 1, got ", options.zipf_exponent));
  }
  if (!std::isfinite(options.interaction) || options.interaction < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the interaction strength must be finite and >= 0, got ", options.interaction));
  }
  const TrueModel model = DrawTrueModel(options);
  std::vector<double> rank_cdf(options.vocabulary_per_field);
  double total = 0;
  for (int64_t r = 0; r < options.vocabulary_per_field; ++r) {
    total += std::pow(static_cast<double>(r + 1), -options.zipf_exponent);
    rank_cdf[r] = total;
  }
  for (double& p : rank_cdf) p /= total;

  ASSIGN_OR_RETURN(OutputFile file, OutputFile::Open(env, path, absl::EndsWith(path, ".gz")));
  std::mt19937_64 random(
      SplitMix64(options.seed * 2 + (options.test_split ? 1 : 0) + 0x9e3779b97f4a7c15ull));
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> log_count(0.0, 1.2);
  if (truth != nullptr) *truth = CriteoLogsTruth();
  std::string text;
  for (int64_t n = 0; n < options.num_examples; ++n) {
    double logit = kBias;
    std::array<int64_t, kInteractingFields> ranks;
    ranks.fill(-1);
    std::string line;
    for (int i = 0; i < kCriteoIntegerFeatures; ++i) {
      if (uniform(random) < model.missing_rates[i]) {
        line += '\t';
        continue;
      }
      int64_t x =
          static_cast<int64_t>(std::floor(std::exp(model.log_count_means[i] + log_count(random)))) -
          1;
      if (i == 1 && uniform(random) < kNegativeI2) x = -1;
      // Centred on the column's typical log-count, so that the integers
      // move the click rate of an example, not of the whole data.
      logit +=
          model.integer_weights[i] *
          (std::log1p(static_cast<double>(std::max<int64_t>(x, 0))) - model.log_count_means[i]);
      absl::StrAppend(&line, "\t", x);
    }
    for (int f = 0; f < kCriteoCategoricalFeatures; ++f) {
      line += '\t';
      if (uniform(random) < kMissingCategory) {
        logit += model.missing_weights[f];
        continue;
      }
      const int64_t rank =
          std::lower_bound(rank_cdf.begin(), rank_cdf.end(), uniform(random)) - rank_cdf.begin();
      const int64_t r = std::min<int64_t>(rank, options.vocabulary_per_field - 1);
      logit += model.category_weights[f][r];
      if (f < kInteractingFields) ranks[f] = r;
      absl::StrAppendFormat(&line, "%08x", CategoryCode(options.seed, f, r));
    }
    if (options.interaction > 0) logit += InteractionTerm(model, ranks, options.interaction);
    const double probability = 1.0 / (1.0 + std::exp(-logit));
    const bool clicked = uniform(random) < probability;
    if (truth != nullptr) {
      truth->probabilities.push_back(static_cast<float>(probability));
      truth->labels.push_back(clicked ? 1.0f : 0.0f);
    }
    absl::StrAppend(&text, clicked ? "1" : "0", line, "\n");
    if (text.size() >= kWriteBytes) {
      RETURN_IF_ERROR(file.Write(text));
      text.clear();
    }
  }
  RETURN_IF_ERROR(file.Write(text));
  return file.Close();
}

}  // namespace pstrain
