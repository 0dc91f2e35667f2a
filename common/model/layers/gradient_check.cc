#include "common/model/layers/gradient_check.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace testing_util {

std::vector<double> NumericalGradient(const std::function<double()>& loss, float* values,
                                      int64_t size, double step) {
  std::vector<double> gradient(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const float saved = values[i];
    values[i] = static_cast<float>(saved + step);
    const double plus = loss();
    values[i] = static_cast<float>(saved - step);
    const double minus = loss();
    values[i] = saved;
    gradient[i] = (plus - minus) / (2 * step);
  }
  return gradient;
}

::testing::AssertionResult GradientsNear(const float* analytic, const std::vector<double>& numeric,
                                         double atol, double rtol) {
  int mismatches = 0;
  std::string report;
  for (size_t i = 0; i < numeric.size(); ++i) {
    const double error = std::abs(analytic[i] - numeric[i]);
    if (!(error <= atol + rtol * std::abs(numeric[i]))) {
      if (++mismatches <= 5) {
        absl::StrAppend(&report, "\n  [", i, "] analytic ", analytic[i], " numeric ", numeric[i]);
      }
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mismatches << " of " << numeric.size() << " gradient elements differ:" << report;
}

std::vector<float> RandomValues(int64_t size, float low, float high, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(static_cast<size_t>(size));
  for (float& v : values) v = uniform(rng);
  return values;
}

std::vector<float> RandomValuesAwayFromZero(int64_t size, float margin, float high, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> magnitude(margin, high);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> values(static_cast<size_t>(size));
  for (float& v : values) v = negative(rng) ? -magnitude(rng) : magnitude(rng);
  return values;
}

double Dot(const float* a, const float* b, int64_t size) {
  double sum = 0;
  for (int64_t i = 0; i < size; ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

}  // namespace testing_util
}  // namespace pstrain
