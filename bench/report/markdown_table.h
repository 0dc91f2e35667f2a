#ifndef PSTRAIN_BENCH_REPORT_MARKDOWN_TABLE_H_
#define PSTRAIN_BENCH_REPORT_MARKDOWN_TABLE_H_

#include <string>
#include <utility>
#include <vector>

namespace pstrain {
namespace bench {

// A Markdown table built row by row, for a benchmark whose rows come from
// a loop. Cells are written as given: a `|` inside one would split it.
// Not thread-safe.
class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<std::string> header) : header_(std::move(header)) {}

  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  // The header, its `---` line and the rows, one a line, with no newline
  // after the last.
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_REPORT_MARKDOWN_TABLE_H_
