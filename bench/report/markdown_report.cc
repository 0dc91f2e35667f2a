#include "bench/report/markdown_report.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace bench {

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return absl::StrCat(one, " ", five, " ", fifteen);
}

MarkdownReport::MarkdownReport(absl::string_view title)
    : title_(title), load_at_start_(LoadAverage()) {}

void MarkdownReport::Paragraph(absl::string_view text) { blocks_.emplace_back(text); }

void MarkdownReport::Command(absl::string_view command_line) {
  blocks_.push_back(absl::StrCat("    ", command_line));
}

void MarkdownReport::Table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows) {
  std::string table = absl::StrCat("| ", absl::StrJoin(header, " | "), " |\n|");
  for (size_t i = 0; i < header.size(); ++i) absl::StrAppend(&table, "---|");
  for (const std::vector<std::string>& row : rows) {
    absl::StrAppend(&table, "\n| ", absl::StrJoin(row, " | "), " |");
  }
  blocks_.push_back(std::move(table));
}

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
