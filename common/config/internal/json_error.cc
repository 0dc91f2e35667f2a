#include "common/config/internal/json_error.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace pstrain {
namespace config_internal {

std::string JsonErrorMessage(const google::protobuf::util::Status& status) {
  const std::string message(status.message());
  std::vector<absl::string_view> lines = absl::StrSplit(message, '\n');
  std::string result(absl::StripAsciiWhitespace(lines[0]));
  if (lines.size() > 1) {
    absl::string_view context = absl::StripAsciiWhitespace(lines[1]);
    if (!context.empty()) absl::StrAppend(&result, " (near '", context, "')");
  }
  return result;
}

}  // namespace config_internal
}  // namespace pstrain
