#include "common/piece/dense_piece.h"

#include <cstring>
#include <string>
#include <vector>

#include "common/tensor/bfloat16.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

const std::vector<int64_t> kDims = {2, 3};  // 6 elements, 24 float32 bytes

DenseTensor Piece(DataType dtype, int64_t offset, int64_t size, int64_t whole) {
  DenseTensor piece;
  SetDensePieceHeader(dtype, kDims, offset, size, whole, &piece);
  return piece;
}

TEST(DensePieceBytesTest, WholeWhenItFitsElseWholeElements) {
  EXPECT_EQ(DensePieceBytes(24, 4, 24), 24);
  EXPECT_EQ(DensePieceBytes(24, 4, 10), 8);
  EXPECT_EQ(DensePieceBytes(24, 4, 3), 4);  // at least one element
  EXPECT_EQ(DensePieceBytes(12, 2, 5), 4);
}

TEST(DensePieceHeaderTest, ChunkOnlyForAPartOfTheTensor) {
  const DenseTensor whole = Piece(DATA_TYPE_FLOAT32, 0, 24, 24);
  EXPECT_FALSE(whole.has_chunk());
  EXPECT_THAT(whole.shape().dims(), ::testing::ElementsAre(2, 3));
  const DenseTensor part = Piece(DATA_TYPE_BFLOAT16, 4, 4, 12);
  EXPECT_EQ(part.dtype(), DATA_TYPE_BFLOAT16);
  EXPECT_EQ(part.chunk().offset(), 4);
  EXPECT_EQ(part.chunk().total_bytes(), 12);
}

TEST(PlaceDensePieceTest, PlacesFloatAndWidensBfloat16Offsets) {
  absl::StatusOr<DensePlacement> f =
      PlaceDensePiece("w", Piece(DATA_TYPE_FLOAT32, 8, 8, 24), 8, kDims);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(f->narrowed);
  EXPECT_EQ(f->offset, 8);
  EXPECT_EQ(f->size, 8);
  // bfloat16 offsets count bfloat16 bytes: byte 4 is element 2, float byte 8.
  absl::StatusOr<DensePlacement> b =
      PlaceDensePiece("w", Piece(DATA_TYPE_BFLOAT16, 4, 4, 12), 4, kDims);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b->narrowed);
  EXPECT_EQ(b->elements, 2);
  EXPECT_EQ(b->offset, 8);
  EXPECT_EQ(b->size, 8);
}

TEST(PlaceDensePieceTest, RefusesPiecesThatDoNotFit) {
  EXPECT_THAT(PlaceDensePiece("w", Piece(DATA_TYPE_INT32, 0, 24, 24), 24, kDims).status().message(),
              HasSubstr("DATA_TYPE_INT32"));
  const std::vector<int64_t> other = {3};
  EXPECT_THAT(
      PlaceDensePiece("w", Piece(DATA_TYPE_FLOAT32, 0, 24, 24), 24, other).status().message(),
      HasSubstr("shape [2, 3]"));
  // Past the end, a split element, empty, another total, a short whole.
  EXPECT_THAT(
      PlaceDensePiece("w", Piece(DATA_TYPE_FLOAT32, 20, 8, 24), 8, kDims).status().message(),
      HasSubstr("offset 20"));
  EXPECT_FALSE(PlaceDensePiece("w", Piece(DATA_TYPE_FLOAT32, 2, 4, 24), 4, kDims).ok());
  EXPECT_FALSE(PlaceDensePiece("w", Piece(DATA_TYPE_FLOAT32, 4, 0, 24), 0, kDims).ok());
  EXPECT_FALSE(PlaceDensePiece("w", Piece(DATA_TYPE_FLOAT32, 0, 4, 28), 4, kDims).ok());
  EXPECT_THAT(
      PlaceDensePiece("w", Piece(DATA_TYPE_FLOAT32, 0, 24, 24), 20, kDims).status().message(),
      HasSubstr("20 bytes; they need 24"));
}

TEST(WriteDensePieceTest, CopiesFloatAndWidensBfloat16) {
  std::vector<float> tensor(6, 0.0f);
  const std::vector<float> values = {1.5f, -2.0f};
  DensePlacement f;
  f.offset = 8;
  f.size = 8;
  f.elements = 2;
  WriteDensePiece(f, reinterpret_cast<const char*>(values.data()),
                  reinterpret_cast<char*>(tensor.data()) + f.offset);
  EXPECT_EQ(tensor, std::vector<float>({0, 0, 1.5f, -2.0f, 0, 0}));
  const std::vector<uint16_t> narrow = {FloatToBfloat16(3.0f), FloatToBfloat16(0.5f)};
  DensePlacement b = f;
  b.narrowed = true;
  b.offset = 16;
  WriteDensePiece(b, reinterpret_cast<const char*>(narrow.data()),
                  reinterpret_cast<char*>(tensor.data()) + b.offset);
  EXPECT_EQ(tensor, std::vector<float>({0, 0, 1.5f, -2.0f, 3.0f, 0.5f}));
}

}  // namespace
}  // namespace pstrain
