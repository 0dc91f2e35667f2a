#ifndef PSTRAIN_BENCH_REPORT_MARKDOWN_REPORT_H_
#define PSTRAIN_BENCH_REPORT_MARKDOWN_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "bench/report/load_average.h"
#include "bench/report/markdown_table.h"

namespace pstrain {
namespace bench {

// One benchmark's section of bench/RESULTS.md, written to the file named by
// the benchmark's --report flag; bench/run_all.sh puts the sections
// together. Targets are stated with the figure that decides them, so a
// reader never has to take a verdict on trust. Blocks render in the order
// they were added. Not thread-safe.
class MarkdownReport {
 public:
  // Records the load average now, as the run's start.
  explicit MarkdownReport(absl::string_view title);

  // A `###` heading: a part of a benchmark that measures several things.
  void SubHeading(absl::string_view text);
  void Paragraph(absl::string_view text);
  // The command line that reproduces the figures, from the repository root.
  void Command(absl::string_view command_line);
  void Table(const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows);
  void Table(const MarkdownTable& table);
  // "Target: <what>: **met** (<figure>)." or **not met**.
  void Target(absl::string_view what, bool met, absl::string_view figure);

  // The section as Markdown, ending with the load average at start and now.
  std::string Render() const;
  // Writes Render() to `path`; an empty path writes nothing.
  // Unavailable: the file cannot be written (the message names it).
  absl::Status WriteTo(const std::string& path) const;

 private:
  std::string title_;
  std::string load_at_start_;
  std::vector<std::string> blocks_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_REPORT_MARKDOWN_REPORT_H_
