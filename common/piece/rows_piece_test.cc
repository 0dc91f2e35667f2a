#include "common/piece/rows_piece.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

TEST(RowsPieceTest, GatheredRowsScatterBackToTheirPositions) {
  const std::vector<int64_t> ids = {7, 3, 9};
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};  // width 2
  const std::vector<int32_t> positions = {2, 0};
  SparseRows piece;
  GatherRowsPiece(ids, values.data(), 2, positions, &piece);
  EXPECT_THAT(piece.ids(), ::testing::ElementsAre(9, 7));
  ASSERT_TRUE(CheckRowsPiece("emb", piece, piece.values().size(), 2).ok());

  std::vector<float> back(6, 0.0f);
  RowsTarget target{ids, back.data(), 2, positions};
  size_t next = 0;
  ASSERT_TRUE(ScatterRowsPiece("emb", piece, piece.values(), target, &next).ok());
  EXPECT_EQ(next, 2u);
  EXPECT_EQ(back, std::vector<float>({1, 2, 0, 0, 5, 6}));
  // No position is left for more rows.
  EXPECT_THAT(ScatterRowsPiece("emb", piece, piece.values(), target, &next).message(),
              HasSubstr("were left"));
}

TEST(RowsPieceTest, RefusesRowsThatDoNotFit) {
  SparseRows piece;
  const std::vector<int64_t> ids = {1};
  const std::vector<float> values = {1, 2};
  const std::vector<int32_t> positions = {0};
  GatherRowsPiece(ids, values.data(), 2, positions, &piece);
  EXPECT_THAT(CheckRowsPiece("emb", piece, piece.values().size(), 3).message(),
              HasSubstr("row_width 3"));
  EXPECT_FALSE(CheckRowsPiece("emb", piece, 4, 2).ok());
  piece.set_dtype(DATA_TYPE_BFLOAT16);
  EXPECT_FALSE(CheckRowsPiece("emb", piece, piece.values().size(), 2).ok());

  // A row other than the one asked for.
  const std::vector<int64_t> asked = {2};
  std::vector<float> out(2);
  size_t next = 0;
  EXPECT_THAT(ScatterRowsPiece("emb", piece, piece.values(),
                               RowsTarget{asked, out.data(), 2, positions}, &next)
                  .message(),
              HasSubstr("row 1 of \"emb\" where row 2 was asked for"));
}

TEST(RowsPieceTest, AtLeastOneRowPerPiece) {
  EXPECT_EQ(RowsPerPiece(4, 64), 4);
  EXPECT_EQ(RowsPerPiece(100, 64), 1);
}

}  // namespace
}  // namespace pstrain
