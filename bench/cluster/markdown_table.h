#ifndef PSTRAIN_BENCH_CLUSTER_MARKDOWN_TABLE_H_
#define PSTRAIN_BENCH_CLUSTER_MARKDOWN_TABLE_H_

#include <string>
#include <vector>

namespace pstrain {
namespace bench {

// A Markdown table built row by row.
class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string ToString() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "**met**" or "**not met**".
std::string Verdict(bool met);

// The three load averages of /proc/loadavg ("2.04 2.40 3.41"), or "unknown".
std::string LoadAverage();

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_CLUSTER_MARKDOWN_TABLE_H_
