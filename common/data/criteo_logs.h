#ifndef PSTRAIN_COMMON_DATA_CRITEO_LOGS_H_
#define PSTRAIN_COMMON_DATA_CRITEO_LOGS_H_

// Click logs in the Criteo display-ads layout (criteo_reader.h) drawn from
// a known model, for the tests, benchmarks and examples: the real data set
// cannot be downloaded everywhere, and a known model says what AUC training
// can reach. The true model is logistic: an example clicks with probability
// sigmoid(bias + one weight per categorical value + one weight per integer
// column times log(1 + x), less the column's typical value), so the best
// any model can do on the data is the AUC of the true probabilities, which
// the generator hands back.
//
// Per column: integer x = floor(exp(N(mu, 1.2^2))) - 1 (heavy-tailed
// counts, 0 most common; mu from 0 to 3 by column; I2 is -1 with
// probability 0.05, as the released data has small negative values there),
// empty with a probability from 0.02 to 0.4 by column. Categories of
// 1000 (vocabulary_per_field) values per column, Zipf-ranked, printed as
// 8 hex digits of a hash of (seed, column, rank); empty with probability
// 0.05. Weights: N(0, 0.25^2) per category (and per column's missing
// value), N(0, 0.15^2) per integer column (times log(1 + x) - mu); bias
// -1.5, for a click rate near a quarter and a true AUC near 0.8, as
// models reach on the released data.
//
// With `interaction` s > 0 the logit also has a term no weight per value
// can express, the pairwise interactions that factorization machines and
// DLRM's dot products of embeddings capture: each value (column f, rank r)
// of the first 8 categorical columns (C1 to C8) has a latent vector
// u_{f,r} of 4 numbers, each N(0, 0.5) (variance 0.5, so that the dot
// product of two is of variance 1), and a missing value the zero vector;
// the term is s / sqrt(28) times the sum over the 28 pairs f < g of
// <u_{f,r_f}, u_{g,r_g}>, of standard deviation near s. The lines are
// those of s = 0 (the term reads the values drawn, no more); the labels,
// and the truth handed back, include it. At s = 1.5 logistic regression
// falls well short of the true model (criteo_logs_test, 300 values a
// column: 0.733 against the true 0.860; without the term 0.773 against
// 0.807); at 0, the default, the logs are those without the term.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/checkpoint/env.h"

namespace pstrain {

struct CriteoLogsOptions {
  int64_t num_examples = 100000;
  // Seeds the true model, and with the split the examples.
  uint64_t seed = 0;
  // Other examples of the same true model.
  bool test_split = false;
  int64_t vocabulary_per_field = 1000;
  double zipf_exponent = 1.1;
  // The strength of the interaction term (above); 0 for none, >= 0.
  double interaction = 0;
};

// Each example's true click probability and its label (0 or 1), in order.
struct CriteoLogsTruth {
  std::vector<float> probabilities;
  std::vector<float> labels;
};

// Writes the examples to `path` (gzip-compressed when it ends in ".gz"),
// and what the true model says of them to *truth when not null.
// InvalidArgument: num_examples or vocabulary_per_field < 1, an exponent
// <= 1, a vocabulary over 10^7, an interaction below 0 or not finite.
// Errors: the Env's, naming the file.
absl::Status WriteCriteoLogs(Env& env, const std::string& path, const CriteoLogsOptions& options,
                             CriteoLogsTruth* truth = nullptr);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_CRITEO_LOGS_H_
