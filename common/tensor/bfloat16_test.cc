#include "common/tensor/bfloat16.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

TEST(Bfloat16Test, ExactValuesRoundTrip) {
  for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 65536.0f, 1e-30f}) {
    const float back = Bfloat16ToFloat(FloatToBfloat16(v));
    if (v == 1e-30f) {
      EXPECT_NEAR(back, v, v * 0x1p-8f);
    } else {
      EXPECT_EQ(back, v);
      EXPECT_EQ(std::signbit(back), std::signbit(v));
    }
  }
}

TEST(Bfloat16Test, RoundsToNearestTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: the even one is 1.
  EXPECT_EQ(Bfloat16ToFloat(FloatToBfloat16(1.0f + 0x1p-8f)), 1.0f);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
  EXPECT_EQ(Bfloat16ToFloat(FloatToBfloat16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  // Just above halfway rounds up.
  EXPECT_EQ(Bfloat16ToFloat(FloatToBfloat16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(Bfloat16ToFloat(FloatToBfloat16(-(1.0f + 0x1p-8f + 0x1p-20f))), -(1.0f + 0x1p-7f));
}

TEST(Bfloat16Test, KeepsNanAndInfinityAndOverflowsToInfinity) {
  EXPECT_TRUE(std::isnan(Bfloat16ToFloat(FloatToBfloat16(std::nanf("")))));
  EXPECT_TRUE(std::isnan(Bfloat16ToFloat(FloatToBfloat16(-std::nanf("")))));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Bfloat16ToFloat(FloatToBfloat16(inf)), inf);
  EXPECT_EQ(Bfloat16ToFloat(FloatToBfloat16(-inf)), -inf);
  EXPECT_EQ(Bfloat16ToFloat(FloatToBfloat16(std::numeric_limits<float>::max())), inf);
}

TEST(Bfloat16Test, RelativeErrorIsAtMostHalfAnUlp) {
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int i = 0; i < 100000; ++i) {
    const float v = normal(random);
    const float back = Bfloat16ToFloat(FloatToBfloat16(v));
    EXPECT_LE(std::fabs(back - v), std::fabs(v) * 0x1p-8f) << v;
  }
}

TEST(Bfloat16Test, NarrowsAndWidensSpans) {
  const std::vector<float> values = {1.0f, -3.0f, 0.5f, 1.0f + 0x1p-7f};
  std::vector<uint16_t> narrow(values.size());
  NarrowToBfloat16(values, absl::MakeSpan(narrow));
  // Widened from bytes at an odd address, as a message's payload may lie.
  std::vector<char> bytes(1 + 2 * narrow.size());
  std::memcpy(bytes.data() + 1, narrow.data(), 2 * narrow.size());
  std::vector<float> wide(values.size());
  WidenBfloat16(bytes.data() + 1, static_cast<int64_t>(narrow.size()), wide.data());
  EXPECT_EQ(wide, values);
}

TEST(Bfloat16Test, ErrorFeedbackLosesNoMassOverSteps) {
  // The same small gradient every step, below bfloat16's resolution at
  // the running sum's scale when rounded alone: without feedback 1000
  // steps of 1 + 2^-9 would sum to exactly 1000; with it the sum of what
  // was sent stays within one rounding of the true sum.
  const float gradient = 1.0f + 0x1p-9f;
  std::vector<float> residual = {0.0f};
  std::vector<uint16_t> sent(1);
  double sent_sum = 0, true_sum = 0, plain_sum = 0;
  for (int step = 0; step < 1000; ++step) {
    NarrowWithErrorFeedback(absl::MakeConstSpan(&gradient, 1), absl::MakeSpan(residual),
                            absl::MakeSpan(sent));
    sent_sum += Bfloat16ToFloat(sent[0]);
    plain_sum += Bfloat16ToFloat(FloatToBfloat16(gradient));
    true_sum += gradient;
  }
  EXPECT_EQ(plain_sum, 1000.0);
  EXPECT_NEAR(sent_sum, true_sum, 0x1p-7);
  EXPECT_NEAR(sent_sum + residual[0], true_sum, 1e-4);
}

}  // namespace
}  // namespace pstrain
