#ifndef PSTRAIN_COMMON_DATA_SYNTHETIC_CLICKS_H_
#define PSTRAIN_COMMON_DATA_SYNTHETIC_CLICKS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/example_source.h"
#include "protos/job.pb.h"

namespace pstrain {

// Click logs drawn from a known logistic model, so that a test can check
// that training recovers it. Each example has one id per field; field f's
// id is f * vocabulary + r, with the rank r Zipf-distributed
// (P(r) proportional to 1 / (r + 1)^exponent). The true model gives every id
// a weight drawn from N(0, 0.5^2) and has bias -1; an example's label is 1
// with probability sigmoid(bias + sum of its ids' weights + sum of its dense
// features times theirs).
//
// With dense_features d > 0 each example also has d dense features, each
// drawn from N(0, 1), and the true model a weight for each from
// N(0, 0.5^2) (info().dense_dim == d): a model that reads ids and dense
// features together has both to learn. The ids, and the weights of ids,
// are those of the same spec without dense features; the labels are not.
//
// Examples are generated on demand, each from (seed, split, index) alone, so any
// range of them is reproducible without storing the data set. Immutable;
// thread-safe.
class SyntheticClicks : public ExampleSource {
 public:
  static constexpr float kTrueWeightStddev = 0.5f;
  static constexpr float kTrueBias = -1.0f;

  // `spec` filled (FillDataDefaults) and valid (ValidateDataSpec: sizes
  // > 0, an exponent > 1, as Zipf needs): OpenExampleSource does both.
  // InvalidArgument: a spec not filled (a size of 0, an exponent not above
  // 1), a vocabulary too large to tabulate (over 10^7 ids per field), or
  // dense_features outside [0, 100000].
  // `test`: the test split, other examples of the same true model.
  static absl::StatusOr<std::unique_ptr<SyntheticClicks>> Create(const SyntheticClicksSource& spec,
                                                                 bool test = false);

  const DatasetInfo& info() const override { return info_; }
  absl::Status Fill(absl::Span<const int64_t> indices, ExampleBatch* batch) const override;

  // The true model: a weight per id (num_fields * vocabulary), a weight per
  // dense feature (dense_features; empty without) and the bias.
  const std::vector<float>& true_weights() const { return true_weights_; }
  const std::vector<float>& true_dense_weights() const { return true_dense_weights_; }
  float true_bias() const { return kTrueBias; }

 private:
  SyntheticClicks() = default;

  DatasetInfo info_;
  uint64_t example_seed_ = 0;  // of the split's examples
  int64_t vocabulary_ = 0;
  std::vector<double> rank_cdf_;  // P(rank <= r)
  std::vector<float> true_weights_;
  std::vector<float> true_dense_weights_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_SYNTHETIC_CLICKS_H_
