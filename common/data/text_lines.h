#ifndef PSTRAIN_COMMON_DATA_TEXT_LINES_H_
#define PSTRAIN_COMMON_DATA_TEXT_LINES_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pstrain {

// The longest line a text reader takes (CSV, libsvm, Criteo), held in
// memory or streamed: a file without line breaks (a binary file named by
// mistake) would otherwise be read as one line.
inline constexpr int64_t kMaxLineBytes = int64_t{16} << 20;

// InvalidArgument "<file>:<line>: a line of more than 16777216 bytes: not a
// file of text lines?", as every text reader refuses such a line.
absl::Status LineTooLong(absl::string_view file, int64_t line);

// Calls visit(line, number) for every line of `text`, the contents of
// `file`, in order: `number` 1-based, the line without its '\n' and a '\r'
// before it. A line over kMaxLineBytes is refused (LineTooLong) before
// visit sees it. Returns the first error of visit as it is.
absl::Status ForEachTextLine(
    absl::string_view text, absl::string_view file,
    absl::FunctionRef<absl::Status(absl::string_view line, int64_t number)> visit);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_TEXT_LINES_H_
