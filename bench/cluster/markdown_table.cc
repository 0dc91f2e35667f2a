#include "bench/cluster/markdown_table.h"

#include <fstream>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace pstrain {
namespace bench {

std::string MarkdownTable::ToString() const {
  std::string text = "| " + absl::StrJoin(header_, " | ") + " |\n|";
  for (size_t i = 0; i < header_.size(); ++i) text += "---|";
  text += "\n";
  for (const std::vector<std::string>& row : rows_) text += "| " + absl::StrJoin(row, " | ") + " |\n";
  return text;
}

std::string Verdict(bool met) { return met ? "**met**" : "**not met**"; }

std::string LoadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string line;
  if (!std::getline(file, line)) return "unknown";
  std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (fields.size() < 3) return "unknown";
  return absl::StrJoin(fields.begin(), fields.begin() + 3, " ");
}

}  // namespace bench
}  // namespace pstrain
