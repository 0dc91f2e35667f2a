#ifndef PSTRAIN_COMMON_MODEL_LAYERS_GRADIENT_CHECK_H_
#define PSTRAIN_COMMON_MODEL_LAYERS_GRADIENT_CHECK_H_

// Test helpers: central-difference gradients to check backward passes.

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace testing_util {

// dL/dv[i] by central differences: perturbs values[i] by +-step in place
// (restoring it) and evaluates `loss` each time.
std::vector<double> NumericalGradient(const std::function<double()>& loss, float* values,
                                      int64_t size, double step = 1e-2);

// Succeeds if every |analytic[i] - numeric[i]| <= atol + rtol * |numeric[i]|;
// otherwise names the first few elements that differ.
::testing::AssertionResult GradientsNear(const float* analytic, const std::vector<double>& numeric,
                                         double atol = 2e-3, double rtol = 2e-2);

// Uniform values in [low, high), reproducible from `seed`.
std::vector<float> RandomValues(int64_t size, float low, float high, uint64_t seed);

// Values whose magnitude is at least `margin`: keeps inputs of ReLU and
// friends away from their kink, where a finite difference is meaningless.
std::vector<float> RandomValuesAwayFromZero(int64_t size, float margin, float high, uint64_t seed);

// sum_i a[i] * b[i] in double: a scalar loss L = <y, r> whose gradient with
// respect to y is r.
double Dot(const float* a, const float* b, int64_t size);

}  // namespace testing_util
}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LAYERS_GRADIENT_CHECK_H_
