#include "common/model/initializer.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

VariableSpec Spec(const std::string& name, std::vector<int64_t> dims, InitializerKind kind) {
  VariableSpec spec;
  spec.set_name(name);
  spec.set_dtype(DATA_TYPE_FLOAT32);
  for (int64_t d : dims) spec.mutable_shape()->add_dims(d);
  spec.mutable_initializer()->set_kind(kind);
  spec.mutable_initializer()->set_seed(3);
  return spec;
}

Tensor Init(const VariableSpec& spec) {
  Tensor t = std::move(Tensor::Create(DATA_TYPE_FLOAT32, *Shape::FromProto(spec.shape()))).value();
  EXPECT_TRUE(InitializeDense(spec, &t).ok());
  return t;
}

TEST(InitializerTest, GlorotUniformBoundsAndSpread) {
  const VariableSpec spec = Spec("w", {100, 50}, INITIALIZER_KIND_GLOROT_UNIFORM);
  Tensor t = Init(spec);
  const float limit = std::sqrt(6.0f / 150);
  double sum_sq = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const float v = t.data<float>()[i];
    ASSERT_LE(std::abs(v), limit);
    sum_sq += v * v;
  }
  // The variance of U(-l, l) is l^2 / 3.
  EXPECT_NEAR(sum_sq / t.num_elements(), limit * limit / 3, 0.1 * limit * limit / 3);
}

TEST(InitializerTest, ReproducibleAndNameDependent) {
  VariableSpec a = Spec("a", {4, 4}, INITIALIZER_KIND_NORMAL);
  a.mutable_initializer()->set_stddev(1);
  VariableSpec b = a;
  b.set_name("b");
  Tensor a1 = Init(a), a2 = Init(a), b1 = Init(b);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(a1.data<float>()[i], a2.data<float>()[i]);
  EXPECT_NE(a1.data<float>()[0], b1.data<float>()[0]);
}

TEST(InitializerTest, ConstantsTruncationAndRows) {
  VariableSpec c = Spec("c", {3}, INITIALIZER_KIND_CONSTANT);
  c.mutable_initializer()->set_value(0.5f);
  EXPECT_EQ(Init(c).data<float>()[2], 0.5f);
  VariableSpec t = Spec("t", {1000}, INITIALIZER_KIND_TRUNCATED_NORMAL);
  t.mutable_initializer()->set_stddev(0.1f);
  Tensor tt = Init(t);
  for (int i = 0; i < 1000; ++i) ASSERT_LE(std::abs(tt.data<float>()[i]), 0.2f + 1e-6f);

  VariableSpec e = Spec("e", {0, 4}, INITIALIZER_KIND_UNIFORM);
  e.set_kind(VARIABLE_KIND_EMBEDDING);
  e.mutable_initializer()->set_min(-1);
  e.mutable_initializer()->set_max(1);
  std::vector<float> r1(4), r2(4), r3(4);
  ASSERT_TRUE(InitializeEmbeddingRow(e, 12345, r1.data()).ok());
  ASSERT_TRUE(InitializeEmbeddingRow(e, 12345, r2.data()).ok());
  ASSERT_TRUE(InitializeEmbeddingRow(e, 12346, r3.data()).ok());
  EXPECT_EQ(r1, r2);
  EXPECT_NE(r1, r3);
}

TEST(InitializerTest, RefusesBadParameters) {
  VariableSpec u = Spec("u", {3}, INITIALIZER_KIND_UNIFORM);
  Tensor t = std::move(Tensor::Create(DATA_TYPE_FLOAT32, Shape({3}))).value();
  EXPECT_EQ(InitializeDense(u, &t).code(), absl::StatusCode::kInvalidArgument);
  Tensor wrong = std::move(Tensor::Create(DATA_TYPE_FLOAT32, Shape({4}))).value();
  EXPECT_EQ(InitializeDense(Spec("z", {3}, INITIALIZER_KIND_ZEROS), &wrong).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
