#include "common/data/text_lines.h"

#include "absl/strings/str_cat.h"

namespace pstrain {

absl::Status LineTooLong(absl::string_view file, int64_t line) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": a line of more than ",
                                                 kMaxLineBytes,
                                                 " bytes: not a file of text lines?"));
}

absl::Status ForEachTextLine(
    absl::string_view text, absl::string_view file,
    absl::FunctionRef<absl::Status(absl::string_view line, int64_t number)> visit) {
  int64_t number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == absl::string_view::npos) end = text.size();
    absl::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (static_cast<int64_t>(line.size()) > kMaxLineBytes) return LineTooLong(file, number);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const absl::Status visited = visit(line, number);
    if (!visited.ok()) return visited;
  }
  return absl::OkStatus();
}

}  // namespace pstrain
