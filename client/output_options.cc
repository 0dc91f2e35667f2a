#include "client/output_options.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gflags/gflags.h"

DEFINE_string(output, "text",
              "how to print results: text (for people) or json (one JSON object per result, "
              "for scripts)");
DEFINE_bool(progress, true,
            "show a live progress bar when stdout is a terminal (--no-progress: plain periodic "
            "lines, as when stdout is a file or a pipe)");

namespace pstrain {

absl::StatusOr<OutputOptions> OutputOptionsFromFlags(bool stdout_is_terminal) {
  OutputOptions options;
  if (FLAGS_output == "json") {
    options.format = OutputFormat::kJson;
  } else if (FLAGS_output != "text") {
    return absl::InvalidArgumentError(
        absl::StrCat("--output must be text or json, got '", FLAGS_output, "'"));
  }
  if (options.format == OutputFormat::kJson) {
    options.progress = ProgressStyle::kNone;
  } else if (FLAGS_progress && stdout_is_terminal) {
    options.progress = ProgressStyle::kLiveBar;
  }
  return options;
}

absl::StatusOr<OutputOptions> OutputOptionsFromFlags() {
  return OutputOptionsFromFlags(::isatty(STDOUT_FILENO) == 1);
}

}  // namespace pstrain
