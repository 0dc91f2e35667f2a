#include "bench/report/markdown_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pstrain {
namespace bench {

std::string MarkdownTable::Render() const {
  std::string table = absl::StrCat("| ", absl::StrJoin(header_, " | "), " |\n|");
  for (size_t i = 0; i < header_.size(); ++i) absl::StrAppend(&table, "---|");
  for (const std::vector<std::string>& row : rows_) {
    absl::StrAppend(&table, "\n| ", absl::StrJoin(row, " | "), " |");
  }
  return table;
}

}  // namespace bench
}  // namespace pstrain
