#include "common/piece/dense_segments.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

PieceBytes Floats(std::vector<float> values) {
  return PieceBytes(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
}

TEST(DenseSegmentsTest, PiecesInAnyOrderAreReadWhereTheyLie) {
  DenseSegments segments(16);
  ASSERT_TRUE(segments.Add("w", 8, Floats({3, 4})).ok());
  EXPECT_THAT(segments.CheckComplete("w").message(), HasSubstr("8 of 16 bytes"));
  ASSERT_TRUE(segments.Add("w", 0, Floats({1, 2})).ok());
  EXPECT_TRUE(segments.CheckComplete("w").ok());
  const std::vector<DenseSegment> view = segments.View();
  ASSERT_EQ(view.size(), 2u);
  EXPECT_EQ(view[0].offset, 2);
  EXPECT_THAT(view[0].values, ::testing::ElementsAre(3, 4));
  EXPECT_EQ(view[1].offset, 0);
  EXPECT_THAT(view[1].values, ::testing::ElementsAre(1, 2));
}

TEST(DenseSegmentsTest, RefusesOverlapsAndKeepsNothingOfThem) {
  DenseSegments segments(16);
  ASSERT_TRUE(segments.Add("w", 4, Floats({1, 2})).ok());
  EXPECT_THAT(segments.Add("w", 0, Floats({0, 0})).message(), HasSubstr("overlaps"));
  EXPECT_THAT(segments.Add("w", 8, Floats({0, 0})).message(), HasSubstr("overlaps"));
  EXPECT_EQ(segments.View().size(), 1u);
  EXPECT_THAT(segments.CheckComplete("w").message(), HasSubstr("do not add up"));
}

TEST(DenseSegmentsTest, BorrowedPiecesAreReadWhereTheyLieAndKeptAlive) {
  auto buffer = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  const std::weak_ptr<std::vector<float>> watch = buffer;
  const absl::string_view second_half(reinterpret_cast<const char*>(buffer->data() + 2), 8);
  {
    DenseSegments segments(16);
    ASSERT_TRUE(segments.Add("w", 0, Floats({1, 2})).ok());
    ASSERT_TRUE(segments.Add("w", 8, PieceBytes(second_half, buffer)).ok());
    buffer.reset();
    ASSERT_FALSE(watch.expired());  // the segments keep what they borrow
    ASSERT_TRUE(segments.CheckComplete("w").ok());
    const std::vector<DenseSegment> view = segments.View();
    ASSERT_EQ(view.size(), 2u);
    EXPECT_EQ(view[1].values.data(), watch.lock()->data() + 2);  // not a copy
    // A change where the piece lies is what the consumer reads.
    (*watch.lock())[3] = 40;
    EXPECT_THAT(view[1].values, ::testing::ElementsAre(3, 40));
  }
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace pstrain
