#include "client/report/svg_plot.h"

#include "absl/strings/match.h"
#include "client/report/testing/xml_check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

int Count(absl::string_view text, absl::string_view what) {
  int count = 0;
  for (size_t at = text.find(what); at != absl::string_view::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST(NiceTicksTest, RoundNumbersThatCoverTheRange) {
  EXPECT_THAT(NiceTicks(0, 1, 6), ElementsAre(0, 0.2, 0.4, 0.6000000000000001, 0.8, 1));
  EXPECT_THAT(NiceTicks(0, 3000, 6), ElementsAre(0, 500, 1000, 1500, 2000, 2500, 3000));
  EXPECT_THAT(NiceTicks(13, 97, 5), ElementsAre(0, 20, 40, 60, 80, 100));
  EXPECT_THAT(NiceTicks(0.21, 0.62, 5), ElementsAre(0.2, 0.30000000000000004, 0.4, 0.5,
                                                    0.6000000000000001, 0.7000000000000001));
  EXPECT_THAT(NiceTicks(-0.3, 0.3, 4), ElementsAre(-0.4, -0.2, 0, 0.2, 0.4));
  EXPECT_THAT(NiceTicks(5, 5, 5), ElementsAre(5));
  EXPECT_THAT(NiceTicks(1, 3, 6, /*min_spacing=*/1), ElementsAre(1, 2, 3));
}

TEST(FormatTickTest, ShortLabels) {
  EXPECT_EQ(FormatTick(0), "0");
  EXPECT_EQ(FormatTick(0.25), "0.25");
  EXPECT_EQ(FormatTick(1200), "1200");
  EXPECT_EQ(FormatTick(0.6000000000000001), "0.6");
  EXPECT_EQ(FormatTick(1e-5), "1e-05");
  EXPECT_EQ(FormatTick(26386.4), "26386.4");
}

ScalarSeries Series(std::vector<SeriesPoint> points) {
  ScalarSeries series;
  series.tag = "loss";
  series.points = std::move(points);
  return series;
}

TEST(RenderSvgPlotTest, AxesTicksTitleAndLastValue) {
  PlotOptions options;
  options.title = "train loss";
  const std::string svg =
      RenderSvgPlot(Series({{0, 2.3}, {1000, 0.9}, {2000, 0.5}, {3000, 0.31}}), options);
  EXPECT_TRUE(testing_util::CheckWellFormedXml(svg).ok()) << testing_util::CheckWellFormedXml(svg);
  EXPECT_THAT(svg, HasSubstr("<title>train loss</title>"));
  EXPECT_THAT(svg, HasSubstr(">train loss</text>"));
  EXPECT_THAT(svg, HasSubstr("last 0.31 at step 3000"));
  EXPECT_THAT(svg, HasSubstr(">global step</text>"));
  for (const char* tick :
       {">0</text>", ">1000</text>", ">3000</text>", ">0.5</text>", ">2.5</text>"}) {
    EXPECT_THAT(svg, HasSubstr(tick));
  }
  EXPECT_EQ(Count(svg, "<polyline"), 1);
  EXPECT_EQ(Count(svg, "<circle"), 4);
}

TEST(RenderSvgPlotTest, OnePointIsADotInTheMiddleOfASensibleRange) {
  const std::string svg = RenderSvgPlot(Series({{500, 0.75}}), {});
  EXPECT_TRUE(testing_util::CheckWellFormedXml(svg).ok());
  EXPECT_THAT(svg, Not(HasSubstr("<polyline")));
  EXPECT_EQ(Count(svg, "<circle"), 1);
  EXPECT_THAT(svg, HasSubstr("last 0.75 at step 500"));
  EXPECT_THAT(svg, HasSubstr(">500</text>"));
  EXPECT_THAT(svg, HasSubstr(">440</text>"));
  EXPECT_THAT(svg, HasSubstr(">560</text>"));
  EXPECT_THAT(svg, HasSubstr("<circle cx=\"294.00\" cy=\"148.00\""));  // the middle
  EXPECT_THAT(svg, Not(HasSubstr("nan\"")));
  EXPECT_THAT(svg, Not(HasSubstr("inf")));
}

TEST(RenderSvgPlotTest, TitlesAreEscaped) {
  PlotOptions options;
  options.title = "eval <b>&\"'";
  const std::string svg = RenderSvgPlot(Series({{1, 1}, {2, 2}}), options);
  EXPECT_TRUE(testing_util::CheckWellFormedXml(svg).ok()) << testing_util::CheckWellFormedXml(svg);
  EXPECT_THAT(svg, HasSubstr("eval &lt;b&gt;&amp;&quot;&#39;"));
  EXPECT_THAT(svg, Not(HasSubstr("<b>")));
}

}  // namespace
}  // namespace pstrain
