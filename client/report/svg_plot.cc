#include "client/report/svg_plot.h"

#include <algorithm>
#include <tuple>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/report/html_escape.h"

namespace pstrain {
namespace {

// Room around the plot area for the title, the tick labels and the axis
// names.
constexpr double kLeft = 72, kRight = 24, kTop = 40, kBottom = 44;

// The value range an axis shows: the data's, widened when it is a single
// value so that the point sits in the middle of a sensible range.
std::pair<double, double> AxisRange(double low, double high) {
  if (high > low) return {low, high};
  const double pad = low == 0 ? 1.0 : std::abs(low) * 0.1;
  return {low - pad, high + pad};
}

}  // namespace

std::vector<double> NiceTicks(double low, double high, int count, double min_spacing) {
  if (!(high > low)) return {low};
  const double rough = (high - low) / std::max(1, count - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  // The round step nearest the rough one.
  const double ratio = rough / magnitude;
  const double step = std::max(min_spacing, magnitude * (ratio < 1.5 ? 1
                                                         : ratio < 3 ? 2
                                                         : ratio < 7 ? 5
                                                                     : 10));
  // Whole multiples of the step, so ticks are exactly k * step.
  const double first = std::floor(low / step);
  std::vector<double> ticks;
  for (int i = 0; i <= 100; ++i) {
    const double tick = (first + i) * step;
    ticks.push_back(tick == 0 ? 0.0 : tick);  // no "-0"
    if (tick >= high - step * 1e-9) break;
  }
  return ticks;
}

std::string FormatTick(double value) {
  if (value == 0) return "0";
  const double magnitude = std::abs(value);
  if (magnitude >= 1e7 || magnitude < 1e-4) return absl::StrFormat("%.3g", value);
  return absl::StrFormat("%.6g", value);
}

std::string RenderSvgPlot(const ScalarSeries& series, const PlotOptions& options) {
  const double width = options.width, height = options.height;
  const double plot_width = width - kLeft - kRight, plot_height = height - kTop - kBottom;
  const std::string title = options.title.empty() ? series.tag : options.title;

  double min_step = series.points.front().step, max_step = series.points.back().step;
  double min_value = series.points.front().value, max_value = min_value;
  for (const SeriesPoint& point : series.points) {
    min_value = std::min(min_value, point.value);
    max_value = std::max(max_value, point.value);
  }
  // Plain variables, not structured bindings: the lambdas below capture
  // them, which C++17 allows only for variables.
  double x_low, x_high, y_low, y_high;
  std::tie(x_low, x_high) = AxisRange(min_step, max_step);
  if (min_step == max_step) {
    // A single step: show a range of steps around it.
    const double pad = std::max(5.0, min_step * 0.1);
    x_low = std::max(0.0, min_step - pad);
    x_high = min_step + pad;
  }
  std::tie(y_low, y_high) = AxisRange(min_value, max_value);
  const std::vector<double> x_ticks = NiceTicks(x_low, x_high, 6, /*min_spacing=*/1);
  const std::vector<double> y_ticks = NiceTicks(y_low, y_high, 5);
  x_low = std::min(x_low, x_ticks.front());
  x_high = std::max(x_high, x_ticks.back());
  y_low = std::min(y_low, y_ticks.front());
  y_high = std::max(y_high, y_ticks.back());
  auto x_of = [&](double step) { return kLeft + (step - x_low) / (x_high - x_low) * plot_width; };
  auto y_of = [&](double value) {
    return kTop + plot_height - (value - y_low) / (y_high - y_low) * plot_height;
  };

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n",
      options.width, options.height, options.width, options.height, EscapeHtml(title));
  absl::StrAppendFormat(&svg, "<title>%s</title>\n", EscapeHtml(title));
  absl::StrAppendFormat(&svg,
                        "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
                        options.width, options.height);
  absl::StrAppendFormat(&svg,
                        "<text class=\"plot-title\" x=\"%.1f\" y=\"22\" font-size=\"15\" "
                        "font-weight=\"bold\">%s</text>\n",
                        kLeft, EscapeHtml(title));
  const SeriesPoint& last = series.points.back();
  absl::StrAppendFormat(&svg,
                        "<text class=\"last-value\" x=\"%.1f\" y=\"22\" font-size=\"12\" "
                        "text-anchor=\"end\" fill=\"#333333\">last %s at step %d</text>\n",
                        width - kRight, EscapeHtml(FormatTick(last.value)), last.step);

  // Grid lines and tick labels.
  svg += "<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (const double tick : y_ticks) {
    absl::StrAppendFormat(&svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", kLeft,
                          y_of(tick), kLeft + plot_width, y_of(tick));
  }
  for (const double tick : x_ticks) {
    absl::StrAppendFormat(&svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                          x_of(tick), kTop, x_of(tick), kTop + plot_height);
  }
  svg += "</g>\n<g class=\"ticks\" font-size=\"11\" fill=\"#333333\">\n";
  for (const double tick : y_ticks) {
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                          "dominant-baseline=\"middle\">%s</text>\n",
                          kLeft - 6, y_of(tick), EscapeHtml(FormatTick(tick)));
  }
  for (const double tick : x_ticks) {
    absl::StrAppendFormat(&svg, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                          x_of(tick), kTop + plot_height + 16, EscapeHtml(FormatTick(tick)));
  }
  svg += "</g>\n";
  // Axes.
  absl::StrAppendFormat(&svg,
                        "<g class=\"axes\" stroke=\"#333333\" stroke-width=\"1\">"
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
                        kLeft, kTop + plot_height, kLeft + plot_width, kTop + plot_height, kLeft,
                        kTop, kLeft, kTop + plot_height);
  absl::StrAppendFormat(&svg,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" "
                        "fill=\"#555555\">global step</text>\n",
                        kLeft + plot_width / 2, height - 8);

  // The data: a line through every point, and dots when there are few
  // enough to tell apart (always for a single point).
  if (series.points.size() > 1) {
    std::string points;
    for (const SeriesPoint& point : series.points) {
      absl::StrAppendFormat(&points, "%s%.2f,%.2f", points.empty() ? "" : " ", x_of(point.step),
                            y_of(point.value));
    }
    absl::StrAppendFormat(&svg,
                          "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
                          "stroke-width=\"1.5\" points=\"%s\"/>\n",
                          EscapeHtml(options.color), points);
  }
  if (series.points.size() <= 60) {
    absl::StrAppendFormat(&svg, "<g class=\"dots\" fill=\"%s\">", EscapeHtml(options.color));
    for (const SeriesPoint& point : series.points) {
      absl::StrAppendFormat(&svg, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\"/>", x_of(point.step),
                            y_of(point.value));
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace pstrain
