#ifndef PSTRAIN_BENCH_CLUSTER_STEP_BREAKDOWN_CHART_H_
#define PSTRAIN_BENCH_CLUSTER_STEP_BREAKDOWN_CHART_H_

#include <string>
#include <vector>

namespace pstrain {
namespace bench {

// One stacked bar: a worker's mean step in one run.
struct StepBreakdownBar {
  std::vector<std::string> label_lines;  // under the bar, e.g. {"worker/0", "async"}
  std::vector<double> segment_ms;        // parallel to StepBreakdownChart::segments
};

// A stacked bar chart of where a training step's time goes (or of another
// figure per run, given its unit).
struct StepBreakdownChart {
  std::string title;
  std::string subtitle;
  std::string axis_title = "ms per step";
  std::string unit = "ms";  // after the totals and the reference's value
  std::vector<std::string> segments;  // bottom to top: "compute", "pull", ...
  std::vector<StepBreakdownBar> bars;
  // A dashed horizontal line (e.g. the single-process step time); none
  // when <= 0.
  double reference_ms = 0;
  std::string reference_label;
};

// The chart as a standalone SVG document: a y axis in `axis_title` with
// gridlines, one stacked bar per entry with its segments labelled when
// tall enough and its total on top, a legend, the reference line.
std::string DrawStepBreakdownSvg(const StepBreakdownChart& chart);

// The smallest 1, 2 or 5 times a power of ten that splits [0, max] into at
// most `max_ticks` steps; 1 when max <= 0.
double NiceTickStep(double max, int max_ticks);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_STEP_BREAKDOWN_CHART_H_
