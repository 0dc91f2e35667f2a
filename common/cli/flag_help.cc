#include "common/cli/flag_help.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace pstrain {

bool IsOwnFlag(const gflags::CommandLineFlagInfo& flag) {
  for (absl::string_view folder : {"common/", "server/", "worker/", "evaluator/", "client/",
                                   "tests/", "bench/", "examples/"}) {
    if (absl::StartsWith(flag.filename, folder)) return true;
  }
  return false;
}

std::string FormatFlagHelp(const gflags::CommandLineFlagInfo& flag) {
  std::string text = absl::StrCat("  --", flag.name);
  if (flag.type != "bool") absl::StrAppend(&text, "=", flag.type == "string" ? "STRING" : "N");
  absl::StrAppend(&text, "\n      ", flag.description);
  const std::string default_value =
      flag.type == "string" ? absl::StrCat("\"", flag.default_value, "\"") : flag.default_value;
  absl::StrAppend(&text, " (default: ", default_value, ")\n");
  return text;
}

}  // namespace pstrain
