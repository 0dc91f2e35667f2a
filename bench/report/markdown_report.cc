#include "bench/report/markdown_report.h"

#include <fstream>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace bench {

MarkdownReport::MarkdownReport(absl::string_view title)
    : title_(title), load_at_start_(LoadAverage()) {}

void MarkdownReport::SubHeading(absl::string_view text) {
  blocks_.push_back(absl::StrCat("### ", text));
}

void MarkdownReport::Paragraph(absl::string_view text) { blocks_.emplace_back(text); }

void MarkdownReport::Command(absl::string_view command_line) {
  blocks_.push_back(absl::StrCat("    ", command_line));
}

void MarkdownReport::Table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  MarkdownTable table(header);
  for (const std::vector<std::string>& row : rows) table.AddRow(row);
  Table(table);
}

void MarkdownReport::Table(const MarkdownTable& table) { blocks_.push_back(table.Render()); }

void MarkdownReport::Target(absl::string_view what, bool met, absl::string_view figure) {
  blocks_.push_back(
      absl::StrCat("Target: ", what, ": **", met ? "met" : "not met", "** (", figure, ")."));
}

std::string MarkdownReport::Render() const {
  std::string out = absl::StrCat("## ", title_, "\n\n");
  for (const std::string& block : blocks_) absl::StrAppend(&out, block, "\n\n");
  absl::StrAppend(&out, "Load average (1, 5, 15 min): ", load_at_start_, " at the start, ",
                  LoadAverage(), " at the end.\n");
  return out;
}

absl::Status MarkdownReport::WriteTo(const std::string& path) const {
  if (path.empty()) return absl::OkStatus();
  std::ofstream out(path, std::ios::trunc);
  out << Render();
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write the report to ", path));
  return absl::OkStatus();
}

}  // namespace bench
}  // namespace pstrain
