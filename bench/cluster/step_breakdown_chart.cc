#include "bench/cluster/step_breakdown_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace pstrain {
namespace bench {
namespace {

// Layout in SVG user units.
constexpr double kWidth = 820;
constexpr double kHeight = 480;
constexpr double kLeft = 70;     // y-axis labels
constexpr double kRight = 170;   // legend
constexpr double kTop = 70;      // title and subtitle
constexpr double kBottom = 60;   // bar labels
constexpr double kMinLabelledSegment = 15;  // px; smaller segments carry no text

// Colour-blind-safe fills (Tableau 10), by segment position; idle last and pale.
const char* FillFor(const std::string& segment, size_t index) {
  if (segment == "idle") return "#d9d9d9";
  static const char* kFills[] = {"#76b7b2", "#4e79a7", "#59a14f", "#f28e2b", "#e15759", "#b07aa1"};
  return kFills[index % (sizeof(kFills) / sizeof(kFills[0]))];
}

std::string Escape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

std::string FormatValue(double ms) {
  if (ms >= 100) return absl::StrFormat("%.0f", ms);
  if (ms >= 10) return absl::StrFormat("%.1f", ms);
  return absl::StrFormat("%.2f", ms);
}

}  // namespace

double NiceTickStep(double max, int max_ticks) {
  if (!(max > 0) || max_ticks < 1) return 1;
  const double raw = max / max_ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= raw) return factor * power;
  }
  return 10 * power;
}

std::string DrawStepBreakdownSvg(const StepBreakdownChart& chart) {
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_height = kHeight - kTop - kBottom;
  const double plot_bottom = kTop + plot_height;

  double max_total = chart.reference_ms;
  for (const StepBreakdownBar& bar : chart.bars) {
    double total = 0;
    for (double ms : bar.segment_ms) total += std::max(0.0, ms);
    max_total = std::max(max_total, total);
  }
  const double tick = NiceTickStep(max_total * 1.08, 6);
  const double axis_max = std::max(tick, std::ceil(max_total * 1.08 / tick) * tick);
  auto y_of = [&](double ms) { return plot_bottom - ms / axis_max * plot_height; };

  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
      "font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppendFormat(&svg,
                        "<text x=\"%.0f\" y=\"24\" font-size=\"16\" font-weight=\"bold\">%s</text>\n"
                        "<text x=\"%.0f\" y=\"44\" fill=\"#444\">%s</text>\n",
                        kLeft, Escape(chart.title), kLeft, Escape(chart.subtitle));

  // Y axis: gridlines, tick labels (as many decimals as the tick step
  // needs), title.
  const int tick_decimals = std::max(0, static_cast<int>(-std::floor(std::log10(tick) + 1e-9)));
  for (double value = 0; value <= axis_max + tick / 2; value += tick) {
    const double y = y_of(value);
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#333\">%s</text>\n",
                          kLeft, y, kLeft + plot_width, y, kLeft - 6, y + 4,
                          absl::StrFormat("%.*f", tick_decimals, value));
  }
  absl::StrAppendFormat(&svg,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n"
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n"
                        "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" "
                        "text-anchor=\"middle\" fill=\"#333\">%s</text>\n",
                        kLeft, kTop, kLeft, plot_bottom, kLeft, plot_bottom, kLeft + plot_width,
                        plot_bottom, kLeft - 48, kTop + plot_height / 2, Escape(chart.axis_title));

  // Bars.
  const double slot = chart.bars.empty() ? plot_width : plot_width / chart.bars.size();
  const double bar_width = std::min(90.0, slot * 0.6);
  for (size_t b = 0; b < chart.bars.size(); ++b) {
    const StepBreakdownBar& bar = chart.bars[b];
    const double x = kLeft + slot * b + (slot - bar_width) / 2;
    double base = 0;
    for (size_t s = 0; s < chart.segments.size() && s < bar.segment_ms.size(); ++s) {
      const double ms = std::max(0.0, bar.segment_ms[s]);
      const double top = y_of(base + ms);
      const double height = y_of(base) - top;
      absl::StrAppendFormat(&svg,
                            "<rect class=\"segment\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                            "height=\"%.1f\" fill=\"%s\" stroke=\"white\" stroke-width=\"0.5\">"
                            "<title>%s: %s %s</title></rect>\n",
                            x, top, bar_width, height, FillFor(chart.segments[s], s),
                            Escape(chart.segments[s]), FormatValue(ms), Escape(chart.unit));
      if (height >= kMinLabelledSegment) {
        absl::StrAppendFormat(&svg,
                              "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                              "font-size=\"11\">%s</text>\n",
                              x + bar_width / 2, top + height / 2 + 4, FormatValue(ms));
      }
      base += ms;
    }
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                          "font-weight=\"bold\">%s %s</text>\n",
                          x + bar_width / 2, y_of(base) - 6, FormatValue(base), Escape(chart.unit));
    for (size_t line = 0; line < bar.label_lines.size(); ++line) {
      absl::StrAppendFormat(&svg,
                            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#333\">%s"
                            "</text>\n",
                            x + bar_width / 2, plot_bottom + 18 + 15 * line,
                            Escape(bar.label_lines[line]));
    }
  }

  if (chart.reference_ms > 0) {
    const double y = y_of(chart.reference_ms);
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" "
                          "stroke-dasharray=\"6,4\"/>\n",
                          kLeft, y, kLeft + plot_width, y);
  }

  // Legend, top segment first so it reads in the bars' order; then the
  // reference line, which is labelled here rather than over the bars.
  const double legend_x = kLeft + plot_width + 20;
  double legend_y = kTop + 40;
  for (size_t s = chart.segments.size(); s-- > 0;) {
    absl::StrAppendFormat(&svg,
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n"
                          "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                          legend_x, legend_y, FillFor(chart.segments[s], s), legend_x + 20,
                          legend_y + 11, Escape(chart.segments[s]));
    legend_y += 22;
  }
  if (chart.reference_ms > 0) {
    legend_y += 8;
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" "
                          "stroke-dasharray=\"6,4\"/>\n"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>\n"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s %s</text>\n",
                          legend_x, legend_y + 7, legend_x + 14, legend_y + 7, legend_x + 20,
                          legend_y + 11, Escape(chart.reference_label), legend_x + 20,
                          legend_y + 25, FormatValue(chart.reference_ms), Escape(chart.unit));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace bench
}  // namespace pstrain
