#ifndef PSTRAIN_SERVER_CONSOLE_CONSOLE_ASSETS_H_
#define PSTRAIN_SERVER_CONSOLE_CONSOLE_ASSETS_H_

// The console's files (assets/), compiled into the coordinator so that it
// serves them with nothing beside the binary.

#include "absl/strings/string_view.h"

namespace pstrain {
namespace console {

struct ConsoleAsset {
  absl::string_view name;  // "console.js"
  absl::string_view content_type;
  absl::string_view body;
};

// The asset of that file name; nullptr when there is none.
const ConsoleAsset* FindConsoleAsset(absl::string_view name);

}  // namespace console
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_CONSOLE_CONSOLE_ASSETS_H_
