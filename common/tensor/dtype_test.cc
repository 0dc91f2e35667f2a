#include "common/tensor/dtype.h"

#include <type_traits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

static_assert(DataTypeOf<float>() == DATA_TYPE_FLOAT32);
static_assert(DataTypeOf<double>() == DATA_TYPE_FLOAT64);
static_assert(DataTypeOf<int32_t>() == DATA_TYPE_INT32);
static_assert(DataTypeOf<int64_t>() == DATA_TYPE_INT64);
static_assert(DataTypeOf<uint8_t>() == DATA_TYPE_UINT8);

TEST(DataTypeTest, SizesMatchTheCppTypes) {
  EXPECT_EQ(*DataTypeSize(DATA_TYPE_FLOAT32), sizeof(float));
  EXPECT_EQ(*DataTypeSize(DATA_TYPE_FLOAT64), sizeof(double));
  EXPECT_EQ(*DataTypeSize(DATA_TYPE_INT32), 4u);
  EXPECT_EQ(*DataTypeSize(DATA_TYPE_INT64), 8u);
  EXPECT_EQ(*DataTypeSize(DATA_TYPE_UINT8), 1u);
}

TEST(DataTypeTest, UnspecifiedHasNoSize) {
  absl::StatusOr<size_t> size = DataTypeSize(DATA_TYPE_UNSPECIFIED);
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(size.status().message(), HasSubstr("unspecified"));
}

// A proto3 enum field keeps whatever integer came off the wire.
TEST(DataTypeTest, ValueFromANewerPeerHasNoSize) {
  absl::StatusOr<size_t> size = DataTypeSize(static_cast<DataType>(42));
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(size.status().message(), HasSubstr("unknown dtype 42"));
}

TEST(DataTypeTest, Names) {
  EXPECT_EQ(DataTypeName(DATA_TYPE_FLOAT32), "float32");
  EXPECT_EQ(DataTypeName(DATA_TYPE_FLOAT64), "float64");
  EXPECT_EQ(DataTypeName(DATA_TYPE_INT32), "int32");
  EXPECT_EQ(DataTypeName(DATA_TYPE_INT64), "int64");
  EXPECT_EQ(DataTypeName(DATA_TYPE_UINT8), "uint8");
  EXPECT_EQ(DataTypeName(DATA_TYPE_UNSPECIFIED), "unspecified");
  EXPECT_EQ(DataTypeName(static_cast<DataType>(42)), "unknown");
}

TEST(DataTypeTest, EveryEnumValueHasANameAndSizeOrIsUnspecified) {
  for (int v = DataType_MIN; v <= DataType_MAX; ++v) {
    const auto dtype = static_cast<DataType>(v);
    if (dtype == DATA_TYPE_UNSPECIFIED) continue;
    EXPECT_TRUE(DataTypeSize(dtype).ok()) << v;
    EXPECT_NE(DataTypeName(dtype), "unknown") << v;
  }
}

}  // namespace
}  // namespace pstrain
