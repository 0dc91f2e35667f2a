#include "server/ps/initializer.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

InitializerSpec Spec(InitializerKind kind) {
  InitializerSpec s;
  s.set_kind(kind);
  return s;
}

std::vector<float> Dense(const Initializer& init, int64_t offset, int64_t n) {
  std::vector<float> v(n);
  init.FillDense(offset, absl::MakeSpan(v));
  return v;
}

TEST(InitializerTest, ZerosAndConstant) {
  const int64_t shape[] = {4};
  EXPECT_THAT(Dense(Initializer(InitializerSpec(), 1, "w", shape), 0, 4), ::testing::Each(0.0f));
  InitializerSpec c = Spec(INITIALIZER_KIND_CONSTANT);
  c.set_value(2.5f);
  EXPECT_THAT(Dense(Initializer(c, 1, "w", shape), 0, 4), ::testing::Each(2.5f));
}

TEST(InitializerTest, SameSeedAndNameGiveSameValuesAtAnyOffset) {
  InitializerSpec s = Spec(INITIALIZER_KIND_NORMAL);
  s.set_stddev(1.0f);
  s.set_seed(7);
  const int64_t shape[] = {100};
  const Initializer a(s, 3, "dense/kernel", shape);
  const Initializer b(s, 3, "dense/kernel", shape);
  const std::vector<float> whole = Dense(a, 0, 100);
  EXPECT_EQ(whole, Dense(b, 0, 100));
  const std::vector<float> tail = Dense(b, 60, 40);
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), whole.begin() + 60));
  // Another name, initializer seed or job seed draws other values.
  EXPECT_NE(whole, Dense(Initializer(s, 3, "dense/bias", shape), 0, 100));
  EXPECT_NE(whole, Dense(Initializer(s, 4, "dense/kernel", shape), 0, 100));
  s.set_seed(8);
  EXPECT_NE(whole, Dense(Initializer(s, 3, "dense/kernel", shape), 0, 100));
}

TEST(InitializerTest, RowsDependOnlyOnTheirId) {
  InitializerSpec s = Spec(INITIALIZER_KIND_UNIFORM);
  s.set_min(-1);
  s.set_max(1);
  const int64_t shape[] = {0, 8};
  const Initializer init(s, 0, "emb", shape);
  std::vector<float> r1(8), r2(8), r3(8);
  init.FillRow(123456789012345, absl::MakeSpan(r1));
  init.FillRow(42, absl::MakeSpan(r3));
  init.FillRow(123456789012345, absl::MakeSpan(r2));
  EXPECT_EQ(r1, r2);
  EXPECT_NE(r1, r3);
}

TEST(InitializerTest, DistributionsHaveTheirMoments) {
  constexpr int kN = 200000;
  const int64_t shape[] = {kN};
  InitializerSpec u = Spec(INITIALIZER_KIND_UNIFORM);
  u.set_min(2);
  u.set_max(4);
  InitializerSpec n = Spec(INITIALIZER_KIND_NORMAL);
  n.set_mean(1);
  n.set_stddev(3);
  InitializerSpec t = Spec(INITIALIZER_KIND_TRUNCATED_NORMAL);
  t.set_mean(-1);
  t.set_stddev(0.5f);
  for (const InitializerSpec& spec : {u, n, t}) {
    const std::vector<float> v = Dense(Initializer(spec, 9, "x", shape), 0, kN);
    double sum = 0, sq = 0;
    for (float x : v) sum += x;
    const double mean = sum / kN;
    for (float x : v) sq += (x - mean) * (x - mean);
    const double sd = std::sqrt(sq / kN);
    if (spec.kind() == INITIALIZER_KIND_UNIFORM) {
      EXPECT_THAT(v, ::testing::Each(::testing::AllOf(::testing::Ge(2.0f), ::testing::Lt(4.0f))));
      EXPECT_NEAR(mean, 3.0, 0.01);
      EXPECT_NEAR(sd, 2.0 / std::sqrt(12.0), 0.01);
    } else if (spec.kind() == INITIALIZER_KIND_NORMAL) {
      EXPECT_NEAR(mean, 1.0, 0.03);
      EXPECT_NEAR(sd, 3.0, 0.03);
    } else {
      EXPECT_THAT(v, ::testing::Each(::testing::AllOf(::testing::Ge(-2.0f), ::testing::Le(0.0f))));
      EXPECT_NEAR(mean, -1.0, 0.01);
      EXPECT_NEAR(sd, 0.5 * 0.8796, 0.01);  // sd of N(0,1) truncated at +-2
    }
  }
}

TEST(InitializerTest, GlorotUsesFanInAndFanOut) {
  const int64_t shape[] = {30, 70};
  const std::vector<float> v =
      Dense(Initializer(Spec(INITIALIZER_KIND_GLOROT_UNIFORM), 0, "k", shape), 0, 2100);
  const float limit = std::sqrt(6.0f / 100.0f);
  EXPECT_THAT(v, ::testing::Each(::testing::AllOf(::testing::Ge(-limit), ::testing::Lt(limit))));
  EXPECT_GT(*std::max_element(v.begin(), v.end()), 0.95f * limit);
}

TEST(InitializerTest, ValidateRefusesImpossibleSpecs) {
  InitializerSpec u = Spec(INITIALIZER_KIND_UNIFORM);
  u.set_min(1);
  u.set_max(1);
  EXPECT_EQ(ValidateInitializer(u).code(), absl::StatusCode::kInvalidArgument);
  InitializerSpec n = Spec(INITIALIZER_KIND_NORMAL);
  n.set_stddev(-1);
  EXPECT_EQ(ValidateInitializer(n).code(), absl::StatusCode::kInvalidArgument);
  InitializerSpec c = Spec(INITIALIZER_KIND_CONSTANT);
  c.set_value(NAN);
  EXPECT_EQ(ValidateInitializer(c).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateInitializer(Spec(static_cast<InitializerKind>(99))).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateInitializer(InitializerSpec()).ok());
}

}  // namespace
}  // namespace pstrain
