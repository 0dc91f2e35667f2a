#include "bench/cluster/step_breakdown_chart.h"

#include <regex>
#include <string>

#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

int Count(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// The heights of the segment rectangles, in drawing order.
std::vector<double> SegmentHeights(const std::string& svg) {
  std::vector<double> heights;
  const std::regex segment("class=\"segment\"[^>]*height=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), segment);
       it != std::sregex_iterator(); ++it) {
    heights.push_back(std::stod((*it)[1]));
  }
  return heights;
}

TEST(StepBreakdownChartTest, DrawsOneRectanglePerSegmentScaledToItsTime) {
  StepBreakdownChart chart;
  chart.title = "Step time <by phase>";
  chart.segments = {"compute", "pull", "idle"};
  chart.bars = {{{"worker/0", "async"}, {4, 2, 1}}, {{"worker/1", "async"}, {8, 0, 0}}};
  chart.reference_ms = 5;
  chart.reference_label = "single process";
  const std::string svg = DrawStepBreakdownSvg(chart);

  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  const std::vector<double> heights = SegmentHeights(svg);
  ASSERT_EQ(heights.size(), 6u);
  EXPECT_NEAR(heights[0], 2 * heights[1], 0.2);  // 4 ms against 2 ms
  EXPECT_NEAR(heights[3], heights[0] + heights[1] + heights[2] + heights[2], 0.4);  // 8 = 4+2+1+1
  EXPECT_EQ(heights[4], 0);
  // Totals on top of the bars, the legend, the axis title, escaped text.
  EXPECT_NE(svg.find(">7.00 ms<"), std::string::npos);
  EXPECT_NE(svg.find(">8.00 ms<"), std::string::npos);
  EXPECT_EQ(Count(svg, ">idle</text>"), 1);
  EXPECT_NE(svg.find("ms per step"), std::string::npos);
  EXPECT_NE(svg.find("Step time &lt;by phase&gt;"), std::string::npos);
  EXPECT_NE(svg.find("single process"), std::string::npos);
}

TEST(StepBreakdownChartTest, TickStepsAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(NiceTickStep(9.3, 6), 2);
  EXPECT_DOUBLE_EQ(NiceTickStep(100, 5), 20);
  EXPECT_DOUBLE_EQ(NiceTickStep(0.7, 6), 0.2);
  EXPECT_DOUBLE_EQ(NiceTickStep(240, 6), 50);
  EXPECT_DOUBLE_EQ(NiceTickStep(0, 6), 1);
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
