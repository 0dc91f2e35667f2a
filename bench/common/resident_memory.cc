#include "bench/common/resident_memory.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace pstrain {
namespace bench {

absl::StatusOr<int64_t> ResidentBytes(pid_t pid, const std::string& proc_root) {
  const std::string path =
      absl::StrCat(proc_root, "/", pid == 0 ? std::string("self") : std::to_string(pid), "/status");
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "VmRSS:")) continue;
    // "VmRSS:	  123456 kB"
    rest = absl::StripAsciiWhitespace(rest);
    int64_t kib = 0;
    if (!absl::ConsumeSuffix(&rest, "kB") ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kib)) {
      return absl::InternalError(absl::StrCat(path, ": unreadable VmRSS line '", line, "'"));
    }
    return kib * 1024;
  }
  return absl::InternalError(absl::StrCat(path, " has no VmRSS line"));
}

}  // namespace bench
}  // namespace pstrain
