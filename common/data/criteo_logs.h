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
};

// Each example's true click probability and its label (0 or 1), in order.
struct CriteoLogsTruth {
  std::vector<float> probabilities;
  std::vector<float> labels;
};

// Writes the examples to `path` (gzip-compressed when it ends in ".gz"),
// and what the true model says of them to *truth when not null.
// InvalidArgument: num_examples or vocabulary_per_field < 1, an exponent
// <= 1, a vocabulary over 10^7. Errors: the Env's, naming the file.
absl::Status WriteCriteoLogs(Env& env, const std::string& path, const CriteoLogsOptions& options,
                             CriteoLogsTruth* truth = nullptr);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_CRITEO_LOGS_H_
