#include "worker/internal/narrowed_gradients.h"

#include <vector>

#include "common/tensor/bfloat16.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace worker {
namespace internal {
namespace {

Gradients DenseGradient(const std::vector<float>& values) {
  Gradients gradients;
  float* buffer = *gradients.DenseBuffer("w", Shape({static_cast<int64_t>(values.size())}));
  std::copy(values.begin(), values.end(), buffer);
  return gradients;
}

std::vector<float> Widened(const Tensor& narrowed) {
  std::vector<float> out(narrowed.num_elements());
  WidenBfloat16(static_cast<const char*>(narrowed.raw_data()), narrowed.num_elements(), out.data());
  return out;
}

TEST(NarrowedGradientsTest, SendsWhatRoundingTookOffWithTheNextGradient) {
  NarrowedGradients narrowed;
  const float small = 0x1p-9f;  // below bfloat16's resolution next to 1
  const Gradients gradients = DenseGradient({1.0f + small, -2.0f});
  double sent = 0;
  for (int step = 0; step < 4; ++step) {
    absl::StatusOr<const absl::flat_hash_map<std::string, Tensor>*> wire =
        narrowed.Narrow(gradients);
    ASSERT_TRUE(wire.ok()) << wire.status();
    const Tensor& w = (*wire)->at("w");
    EXPECT_EQ(w.dtype(), DATA_TYPE_BFLOAT16);
    EXPECT_EQ(w.shape(), Shape({2}));
    const std::vector<float> values = Widened(w);
    EXPECT_EQ(values[1], -2.0f);
    sent += values[0];
  }
  // Four steps of 1 + 2^-9: 4 + 2^-7, which the sent values add up to,
  // the residual holding nothing more.
  EXPECT_DOUBLE_EQ(sent + narrowed.residual("w")[0], 4 * (1.0 + small));
  EXPECT_NEAR(sent, 4 * (1.0 + small), 0x1p-8);
}

TEST(NarrowedGradientsTest, RefusesAGradientWhoseShapeChanged) {
  NarrowedGradients narrowed;
  ASSERT_TRUE(narrowed.Narrow(DenseGradient({1, 2, 3})).ok());
  absl::StatusOr<const absl::flat_hash_map<std::string, Tensor>*> wire =
      narrowed.Narrow(DenseGradient({1, 2}));
  EXPECT_EQ(wire.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wire.status().message().find("the last one had 3"), std::string::npos) << wire.status();
}

TEST(NarrowedGradientsTest, LeavesOutVariablesWithoutAGradientThisPush) {
  NarrowedGradients narrowed;
  Gradients both = DenseGradient({1});
  *both.DenseBuffer("b", Shape({1})).value() = 2;
  ASSERT_TRUE(narrowed.Narrow(both).ok());
  absl::StatusOr<const absl::flat_hash_map<std::string, Tensor>*> wire =
      narrowed.Narrow(DenseGradient({1}));
  ASSERT_TRUE(wire.ok());
  EXPECT_EQ((*wire)->size(), 1u);
  EXPECT_TRUE((*wire)->contains("w"));
}

}  // namespace
}  // namespace internal
}  // namespace worker
}  // namespace pstrain
