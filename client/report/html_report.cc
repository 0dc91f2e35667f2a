#include "client/report/html_report.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "client/report/html_escape.h"
#include "client/report/svg_plot.h"
#include "common/checkpoint/file_path.h"

namespace pstrain {
namespace {

// Inline, so the file shows the same anywhere, offline.
constexpr char kStyle[] = R"(
body { font-family: sans-serif; margin: 24px; color: #222222; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 18px; border-bottom: 1px solid #dddddd; padding-bottom: 4px; margin-top: 28px; }
code, pre { font-family: monospace; }
code { overflow-wrap: anywhere; }
pre { background: #f6f6f6; padding: 12px; overflow-x: auto; font-size: 12px; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; border: 1px solid #dddddd; }
figcaption { font-size: 12px; color: #555555; padding: 4px 8px 8px 8px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #dddddd; padding: 4px 10px; text-align: left; white-space: nowrap; }
td code { overflow-wrap: normal; }
td.bad { white-space: normal; }
th { background: #f0f0f0; }
.notes li { color: #8a4b00; }
.bad { color: #b00020; }
)";

std::string Caption(const ScalarSeries& series) {
  std::string caption =
      series.points.size() == 1
          ? absl::StrFormat("1 point, at step %d", series.points.front().step)
          : absl::StrFormat("%d points, steps %d to %d", series.points.size(),
                            series.points.front().step, series.points.back().step);
  if (!series.non_finite.empty()) {
    absl::StrAppendFormat(&caption, "; %d non-finite value%s skipped (first at step %d)",
                          series.non_finite.size(), series.non_finite.size() == 1 ? "" : "s",
                          series.non_finite.front().step);
  }
  return caption;
}

void AppendPlots(const std::vector<ScalarSeries>& series, PassMode pass, const std::string& color,
                 std::string* html) {
  *html += "<div class=\"plots\">\n";
  for (const ScalarSeries& one : series) {
    const std::string title = PlotTitle(one.tag, pass);
    if (one.points.empty()) {
      absl::StrAppend(html, "<p class=\"bad\">", EscapeHtml(title), ": no finite values (",
                      one.non_finite.size(), " non-finite skipped)</p>\n");
      continue;
    }
    PlotOptions options;
    options.title = title;
    options.color = color;
    absl::StrAppend(html, "<figure>\n", RenderSvgPlot(one, options), "<figcaption>",
                    EscapeHtml(Caption(one)), "</figcaption>\n</figure>\n");
  }
  *html += "</div>\n";
}

std::string FormatBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return absl::StrFormat("%.1f MiB", bytes / 1048576.0);
  if (bytes >= 1024) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrCat(bytes, " B");
}

std::string MetricsText(const std::map<std::string, double>& metrics) {
  return absl::StrJoin(metrics, " ", [](std::string* out, const auto& metric) {
    absl::StrAppend(out, metric.first, "=", FormatTick(metric.second));
  });
}

void AppendCheckpoints(const ReportData& data, std::string* html) {
  *html += "<h2 id=\"checkpoints\">Checkpoints</h2>\n";
  if (data.checkpoints.empty()) {
    *html += "<p>none</p>\n";
    return;
  }
  *html +=
      "<table>\n<tr><th>step</th><th>folder</th><th>state</th><th>shards</th><th>size</th>"
      "<th>written (UTC)</th></tr>\n";
  for (const CheckpointSummary& checkpoint : data.checkpoints) {
    const bool good = checkpoint.problem.empty();
    const std::string state =
        good ? (checkpoint.final ? "complete, final" : "complete") : checkpoint.problem;
    const std::string written =
        good ? absl::FormatTime("%Y-%m-%d %H:%M:%S",
                                absl::FromUnixMillis(checkpoint.created_unix_ms),
                                absl::UTCTimeZone())
             : "";
    // The folder's name: model_dir is at the top of the page.
    absl::StrAppend(html, "<tr><td>", checkpoint.step, "</td><td><code>",
                    EscapeHtml(Basename(checkpoint.path)), "</code></td><td",
                    good ? "" : " class=\"bad\"", ">", EscapeHtml(state), "</td><td>",
                    good ? absl::StrCat(checkpoint.num_shards) : "", "</td><td>",
                    good ? FormatBytes(checkpoint.bytes) : "", "</td><td>", EscapeHtml(written),
                    "</td></tr>\n");
  }
  *html += "</table>\n";
}

void AppendExports(const ReportData& data, std::string* html) {
  if (data.exports.empty()) return;
  *html +=
      "<h2 id=\"exports\">Exports</h2>\n<table>\n<tr><th>kind</th><th>step</th><th>folder</th>"
      "<th>eval metrics</th></tr>\n";
  for (const ExportSummary& exported : data.exports) {
    absl::StrAppend(html, "<tr><td>", EscapeHtml(exported.kind), "</td><td>", exported.step,
                    "</td><td><code>", EscapeHtml(exported.path), "</code></td><td>",
                    EscapeHtml(MetricsText(exported.metrics)), "</td></tr>\n");
  }
  *html += "</table>\n";
}

}  // namespace

std::string PlotTitle(const std::string& tag, PassMode pass) {
  if (pass == PassMode::kEval) return absl::StrCat("eval ", tag);
  static constexpr struct {
    const char* tag;
    const char* title;
  } kTitles[] = {{"loss", "train loss"},
                 {"learning_rate", "learning rate"},
                 {"examples_per_sec", "examples/s"},
                 {"global_step_per_sec", "global steps/s"}};
  for (const auto& known : kTitles) {
    if (tag == known.tag) return known.title;
  }
  return absl::StrCat("train ", tag);
}

std::string RenderHtmlReport(const ReportData& data) {
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
      "<meta charset=\"utf-8\"/>\n<title>pstrain report: ",
      EscapeHtml(data.model_dir), "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n",
      "<h1>pstrain report</h1>\n<p>model_dir <code>", EscapeHtml(data.model_dir), "</code></p>\n");
  if (!data.notes.empty()) {
    html += "<h2 id=\"notes\">Notes</h2>\n<ul class=\"notes\">\n";
    for (const std::string& note : data.notes)
      absl::StrAppend(&html, "<li>", EscapeHtml(note), "</li>\n");
    html += "</ul>\n";
  }
  html += "<h2 id=\"training\">Training</h2>\n";
  if (data.train.empty()) {
    html += "<p>no training scalars</p>\n";
  } else {
    AppendPlots(data.train, PassMode::kTrain, "#1f77b4", &html);
  }
  html += "<h2 id=\"evaluation\">Evaluation</h2>\n";
  if (data.eval.empty()) {
    html += "<p>no evaluation metrics</p>\n";
  } else {
    AppendPlots(data.eval, PassMode::kEval, "#d62728", &html);
  }
  AppendCheckpoints(data, &html);
  AppendExports(data, &html);
  html += "<h2 id=\"job-spec\">Job spec</h2>\n";
  if (data.job_spec_text.empty()) {
    html += "<p>not found in any checkpoint or export</p>\n";
  } else {
    absl::StrAppend(&html, "<p>from <code>", EscapeHtml(data.job_spec_source), "</code></p>\n<pre>",
                    EscapeHtml(data.job_spec_text), "</pre>\n");
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace pstrain
