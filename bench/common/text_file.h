#ifndef PSTRAIN_BENCH_COMMON_TEXT_FILE_H_
#define PSTRAIN_BENCH_COMMON_TEXT_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace pstrain {
namespace bench {

// Replaces the file at `path` with `text` (a job spec, a chart, a report).
// Unavailable: it cannot be written (the message names the path).
absl::Status WriteTextFile(const std::string& path, absl::string_view text);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_COMMON_TEXT_FILE_H_
