#include "common/piece/dense_segments.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

std::string Floats(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4);
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

}  // namespace
}  // namespace pstrain
