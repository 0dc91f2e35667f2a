#ifndef PSTRAIN_CLIENT_OUTPUT_OPTIONS_H_
#define PSTRAIN_CLIENT_OUTPUT_OPTIONS_H_

// How a command prints: --output (text for people, json for scripts) and
// --progress (a live bar on a terminal). Defined once here for every command.

#include "absl/status/statusor.h"

namespace pstrain {

enum class OutputFormat { kText, kJson };

enum class ProgressStyle {
  kLiveBar,     // one line redrawn in place with \r (a terminal)
  kPlainLines,  // a line every few seconds (a pipe, a file, --no-progress)
  kNone,        // nothing: --output=json prints events as JSON instead
};

struct OutputOptions {
  OutputFormat format = OutputFormat::kText;
  ProgressStyle progress = ProgressStyle::kPlainLines;
};

// From --output and --progress, and whether stdout is a terminal.
// InvalidArgument: --output is neither text nor json.
absl::StatusOr<OutputOptions> OutputOptionsFromFlags(bool stdout_is_terminal);

// The same, for the process's real stdout.
absl::StatusOr<OutputOptions> OutputOptionsFromFlags();

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_OUTPUT_OPTIONS_H_
