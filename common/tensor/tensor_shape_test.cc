#include "common/tensor/tensor_shape.h"

#include <cstdint>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

TensorShape Proto(std::initializer_list<int64_t> dims) {
  TensorShape proto;
  for (int64_t d : dims) proto.add_dims(d);
  return proto;
}

TEST(ShapeTest, ScalarHasOneElementAndNoDims) {
  Shape scalar;
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.num_elements(), 1);
  EXPECT_EQ(scalar.DebugString(), "[]");
}

TEST(ShapeTest, Accessors) {
  Shape shape({128, 784});
  EXPECT_EQ(shape.rank(), 2);
  EXPECT_EQ(shape.dim(0), 128);
  EXPECT_EQ(shape.dim(1), 784);
  EXPECT_EQ(shape.dims(), (std::vector<int64_t>{128, 784}));
  EXPECT_EQ(shape.num_elements(), 128 * 784);
  EXPECT_EQ(shape.DebugString(), "[128, 784]");
}

TEST(ShapeTest, ZeroDimMeansNoElements) {
  EXPECT_EQ(Shape({0}).num_elements(), 0);
  EXPECT_EQ(Shape({3, 0, 5}).num_elements(), 0);
}

TEST(ShapeTest, Equality) {
  EXPECT_EQ(Shape({2, 3}), Shape({2, 3}));
  EXPECT_NE(Shape({2, 3}), Shape({3, 2}));
  EXPECT_NE(Shape({6}), Shape({2, 3}));
  EXPECT_NE(Shape(), Shape({1}));
}

TEST(ShapeTest, ProtoRoundTrip) {
  const Shape shape({4, 1, 7});
  TensorShape proto = Proto({9, 9, 9, 9});  // Replaced, not appended to.
  shape.ToProto(&proto);
  EXPECT_EQ(proto.dims_size(), 3);
  absl::StatusOr<Shape> back = Shape::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, shape);
  EXPECT_TRUE(ShapeEqualsProto(shape, proto));
  EXPECT_FALSE(ShapeEqualsProto(shape, Proto({4, 1})));
  EXPECT_FALSE(ShapeEqualsProto(shape, Proto({4, 1, 8})));
}

TEST(ShapeTest, RefusesNegativeDimNamingIt) {
  absl::StatusOr<Shape> shape = Shape::FromProto(Proto({2, -1}));
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shape.status().message(), HasSubstr("[2, -1] has negative dim -1 at index 1"));
}

TEST(ShapeTest, RefusesElementCountOverflow) {
  const int64_t big = int64_t{1} << 32;
  absl::StatusOr<Shape> shape = Shape::FromDims({big, big});
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shape.status().message(), HasSubstr("more than 2^63-1 elements"));
}

// Otherwise dims[1] * dims[2] would overflow in any code that multiplies a
// subset of the dims, such as the row width of a matrix view.
TEST(ShapeTest, RefusesOverflowEvenWithAZeroDim) {
  const int64_t big = int64_t{1} << 32;
  EXPECT_FALSE(Shape::FromDims({0, big, big}).ok());
}

TEST(ShapeTest, AcceptsTheLargestCount) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  absl::StatusOr<Shape> shape = Shape::FromDims({max});
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->num_elements(), max);
}

TEST(ShapeTest, RefusesRankAboveLimit) {
  TensorShape proto;
  for (int i = 0; i <= Shape::kMaxRank; ++i) proto.add_dims(1);
  absl::StatusOr<Shape> shape = Shape::FromProto(proto);
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(), HasSubstr("rank 33, more than the limit of 32"));
}

TEST(ShapeDeathTest, InvalidDimsInCodeAreAProgrammingError) {
  EXPECT_DEATH(Shape({3, -2}), "negative dim -2");
}

}  // namespace
}  // namespace pstrain
