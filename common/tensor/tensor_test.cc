#include "common/tensor/tensor.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr DataType kAllTypes[] = {DATA_TYPE_FLOAT32, DATA_TYPE_FLOAT64, DATA_TYPE_INT32,
                                  DATA_TYPE_INT64, DATA_TYPE_UINT8};

bool AllZero(const Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.num_bytes(); ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

TEST(TensorTest, CreateGivesZeroFilledBufferOfTheRightSize) {
  absl::StatusOr<Tensor> t = Tensor::Create(DATA_TYPE_FLOAT32, Shape({3, 5}));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DATA_TYPE_FLOAT32);
  EXPECT_EQ(t->shape(), Shape({3, 5}));
  EXPECT_EQ(t->num_elements(), 15);
  EXPECT_EQ(t->num_bytes(), 60u);
  EXPECT_TRUE(AllZero(*t));
  EXPECT_EQ(t->DebugString(), "float32 [3, 5]");
}

TEST(TensorTest, BufferIs64ByteAlignedForEveryTypeAndSize) {
  for (DataType dtype : kAllTypes) {
    for (int64_t n : {0, 1, 3, 17, 64, 1000, 4097}) {
      for (bool zero : {true, false}) {
        absl::StatusOr<Tensor> t = zero ? Tensor::Create(dtype, Shape({n}))
                                        : Tensor::CreateUninitialized(dtype, Shape({n}));
        ASSERT_TRUE(t.ok()) << t.status();
        ASSERT_NE(t->raw_data(), nullptr) << DataTypeName(dtype) << " " << n;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % 64, 0u)
            << DataTypeName(dtype) << " " << n;
      }
    }
  }
}

TEST(TensorTest, ShapeCanBeWrittenInline) {
  absl::StatusOr<Tensor> t = Tensor::Create(DATA_TYPE_UINT8, {2, 3});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), Shape({2, 3}));
}

TEST(TensorTest, DefaultTensorIsAnEmptyPlaceholder) {
  Tensor t;
  EXPECT_EQ(t.dtype(), DATA_TYPE_UNSPECIFIED);
  EXPECT_EQ(t.shape(), Shape({0}));
  EXPECT_EQ(t.num_elements(), 0);
  EXPECT_EQ(t.num_bytes(), 0u);
  EXPECT_EQ(t.Clone().num_bytes(), 0u);
}

TEST(TensorTest, ScalarHasOneElement) {
  absl::StatusOr<Tensor> t = Tensor::Create(DATA_TYPE_FLOAT64, Shape());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->num_elements(), 1);
  EXPECT_EQ(t->num_bytes(), 8u);
  t->data<double>()[0] = 2.5;
  EXPECT_EQ(t->flat<double>()(0), 2.5);
}

TEST(TensorTest, RefusesUnspecifiedDtype) {
  absl::StatusOr<Tensor> t = Tensor::Create(DATA_TYPE_UNSPECIFIED, Shape({2}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("unspecified"));
}

TEST(TensorTest, RefusesByteCountOverflowWithoutCrashing) {
  // 2^61 elements fit in int64_t; 2^61 * 8 bytes do not.
  absl::StatusOr<Tensor> t = Tensor::Create(DATA_TYPE_FLOAT64, Shape({int64_t{1} << 61}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("float64 [2305843009213693952]"));
  EXPECT_THAT(t.status().message(), HasSubstr("more than 2^63-1 bytes"));
}

TEST(TensorTest, RefusesHugeSizeAsResourceExhausted) {
  absl::StatusOr<Tensor> t = Tensor::Create(DATA_TYPE_UINT8, Shape({int64_t{1} << 50}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(t.status().message(), HasSubstr("1125899906842624 bytes"));
}

TEST(TensorTest, FromValuesHoldsTheValuesRowMajor) {
  absl::StatusOr<Tensor> t = Tensor::FromValues<int32_t>(Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DATA_TYPE_INT32);
  EXPECT_EQ(t->matrix<int32_t>()(1, 0), 4);
  EXPECT_EQ(t->matrix<int32_t>()(0, 2), 3);
}

TEST(TensorTest, FromValuesRefusesWrongCount) {
  absl::StatusOr<Tensor> t = Tensor::FromValues<float>(Shape({2, 2}), {1, 2, 3});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("shape [2, 2] needs 4 values, got 3"));
}

TEST(TensorTest, MoveTransfersTheBufferAndEmptiesTheSource) {
  Tensor a = *Tensor::FromValues<float>(Shape({4}), {1, 2, 3, 4});
  const void* buffer = a.raw_data();
  Tensor b = std::move(a);
  EXPECT_EQ(b.raw_data(), buffer);
  EXPECT_EQ(b.flat<float>()(3), 4.0f);
  EXPECT_EQ(a.dtype(), DATA_TYPE_UNSPECIFIED);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a.num_elements(), 0);
  EXPECT_EQ(a.num_bytes(), 0u);

  Tensor c;
  c = std::move(b);
  EXPECT_EQ(c.raw_data(), buffer);
  EXPECT_EQ(b.num_bytes(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.shape(), Shape({0}));
}

TEST(TensorTest, CloneIsADeepCopy) {
  Tensor a = *Tensor::FromValues<int64_t>(Shape({3}), {7, 8, 9});
  Tensor b = a.Clone();
  EXPECT_NE(b.raw_data(), a.raw_data());
  EXPECT_EQ(b.dtype(), a.dtype());
  EXPECT_EQ(b.shape(), a.shape());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw_data()) % 64, 0u);
  b.data<int64_t>()[0] = 100;
  EXPECT_EQ(a.data<int64_t>()[0], 7);
  EXPECT_EQ(b.data<int64_t>()[1], 8);
}

TEST(TensorTest, FlatViewAliasesTheBuffer) {
  Tensor t = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({2, 8}));
  FlatView<float> flat = t.flat<float>();
  EXPECT_EQ(flat.data(), t.data<float>());
  EXPECT_EQ(flat.size(), 16);
  flat.setConstant(1.5f);
  flat(5) = -2.0f;
  EXPECT_EQ(t.data<float>()[0], 1.5f);
  EXPECT_EQ(t.data<float>()[5], -2.0f);

  // Eigen expressions work in place, e.g. an SGD step.
  Tensor grad = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({2, 8}));
  grad.flat<float>().setConstant(1.0f);
  t.flat<float>() -= 0.5f * grad.flat<float>();
  EXPECT_EQ(t.data<float>()[0], 1.0f);
  EXPECT_EQ(t.data<float>()[5], -2.5f);

  const Tensor& ct = t;
  ConstFlatView<float> const_flat = ct.flat<float>();
  EXPECT_EQ(const_flat.data(), ct.data<float>());
}

TEST(TensorTest, MatrixViewIsRowMajorAndAliasesTheBuffer) {
  Tensor t = *Tensor::Create(DATA_TYPE_FLOAT64, Shape({2, 3}));
  MatrixView<double> m = t.matrix<double>();
  EXPECT_EQ(m.rows(), 2);
  EXPECT_EQ(m.cols(), 3);
  EXPECT_EQ(m.data(), t.data<double>());
  m(1, 2) = 7.0;
  m(0, 1) = 3.0;
  EXPECT_EQ(t.data<double>()[1 * 3 + 2], 7.0);
  EXPECT_EQ(t.data<double>()[0 * 3 + 1], 3.0);

  const Tensor& ct = t;
  EXPECT_EQ(ct.matrix<double>()(1, 2), 7.0);
}

TEST(TensorTest, ZeroElementViewsAreEmpty) {
  Tensor t = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({0, 4}));
  EXPECT_EQ(t.flat<float>().size(), 0);
  EXPECT_EQ(t.matrix<float>().rows(), 0);
  EXPECT_EQ(t.matrix<float>().cols(), 4);
}

TEST(TensorTest, ReshapeKeepsTheBuffer) {
  Tensor t = *Tensor::FromValues<float>(Shape({6}), {0, 1, 2, 3, 4, 5});
  const void* buffer = t.raw_data();
  ASSERT_TRUE(t.Reshape(Shape({3, 2})).ok());
  EXPECT_EQ(t.raw_data(), buffer);
  EXPECT_EQ(t.matrix<float>()(2, 1), 5.0f);

  absl::Status status = t.Reshape(Shape({4, 2}));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("[3, 2] of 6 elements to [4, 2] of 8 elements"));
  EXPECT_EQ(t.shape(), Shape({3, 2}));
}

TEST(TensorTest, TensorsLiveInContainers) {
  std::vector<Tensor> tensors;
  for (int i = 0; i < 10; ++i) {
    tensors.push_back(*Tensor::FromValues<int32_t>(Shape({1}), {i}));
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(tensors[i].data<int32_t>()[0], i);
}

TEST(TensorDeathTest, WrongElementTypeIsAProgrammingError) {
  Tensor t = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({2}));
  EXPECT_DEATH(t.data<double>(), "tensor float32 \\[2\\] accessed as float64");
  EXPECT_DEATH(t.flat<int32_t>(), "accessed as int32");
}

TEST(TensorDeathTest, MatrixOfRankOtherThanTwoIsAProgrammingError) {
  Tensor t = *Tensor::Create(DATA_TYPE_FLOAT32, Shape({2, 2, 2}));
  EXPECT_DEATH(t.matrix<float>(), "accessed as a matrix, but its rank is 3");
}

}  // namespace
}  // namespace pstrain
