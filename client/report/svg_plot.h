#ifndef PSTRAIN_CLIENT_REPORT_SVG_PLOT_H_
#define PSTRAIN_CLIENT_REPORT_SVG_PLOT_H_

// One scalar series drawn as an inline SVG line plot: a title, axes with
// tick marks and labels at round numbers, the line (or a dot for a single
// point), and the last value. Text is escaped; the result is well-formed
// XML that browsers render inside HTML.

#include <string>
#include <vector>

#include "client/report/scalar_series.h"

namespace pstrain {

struct PlotOptions {
  // The title above the plot (escaped here). Default: the series' tag.
  std::string title;
  // Size of the picture in CSS pixels. Default 540 x 300: two side by side
  // in a window 1200 pixels wide.
  int width = 540;
  int height = 300;
  // Line colour, any CSS colour. Default a blue.
  std::string color = "#1f77b4";
};

// Round tick values covering [low, high] (low <= high), about `count` of
// them, each a multiple of 1, 2 or 5 times a power of ten: 0, 0.2, 0.4, ...
// The first is <= low and the last >= high, so the axis spans the data.
// The spacing is at least `min_spacing` (1 for an axis of whole steps).
std::vector<double> NiceTicks(double low, double high, int count, double min_spacing = 0);

// A tick label: up to 6 significant digits, no trailing zeros, exponent
// form for very large or small magnitudes ("0.25", "1200", "1e-05").
std::string FormatTick(double value);

// The SVG element of `series`, which must have at least one point.
std::string RenderSvgPlot(const ScalarSeries& series, const PlotOptions& options);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_REPORT_SVG_PLOT_H_
