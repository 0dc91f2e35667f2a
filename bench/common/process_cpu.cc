#include "bench/common/process_cpu.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pstrain {
namespace bench {

absl::StatusOr<double> CpuSeconds(pid_t pid, const std::string& proc_root) {
  const std::string path = absl::StrCat(proc_root, "/", pid, "/stat");
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces: count
  // fields from the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return absl::InternalError(path + " has no command name");
  const std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(text).substr(close + 1), ' ', absl::SkipEmpty());
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  int64_t utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return absl::InternalError(absl::StrCat(path, " has no utime and stime fields"));
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace bench
}  // namespace pstrain
