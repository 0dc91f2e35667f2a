#include "common/metrics/process_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Fields of /proc/<pid>/stat, numbered as in proc(5), counted from the
// state (field 3) on, after the command name, which may hold spaces and
// parentheses of its own.
constexpr int kFirstFieldAfterName = 3;
constexpr int kUserTimeField = 14;
constexpr int kSystemTimeField = 15;
constexpr int kStartTimeField = 22;
constexpr int kVirtualSizeField = 23;
constexpr int kResidentPagesField = 24;

absl::Status ParseStat(const std::string& path, const std::string& text, double boot_time,
                       ProcessStats* stats) {
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) {
    return absl::InternalError(absl::StrCat(path, ": no ')' after the command name"));
  }
  const std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(text).substr(name_end + 1), ' ', absl::SkipWhitespace());
  auto field = [&](int number, int64_t* value) -> absl::Status {
    const size_t index = number - kFirstFieldAfterName;
    if (index >= fields.size() || !absl::SimpleAtoi(fields[index], value)) {
      return absl::InternalError(absl::StrCat(path, ": field ", number, " is not a number"));
    }
    return absl::OkStatus();
  };
  int64_t user_ticks = 0, system_ticks = 0, start_ticks = 0, virtual_bytes = 0, resident_pages = 0;
  RETURN_IF_ERROR(field(kUserTimeField, &user_ticks));
  RETURN_IF_ERROR(field(kSystemTimeField, &system_ticks));
  RETURN_IF_ERROR(field(kStartTimeField, &start_ticks));
  RETURN_IF_ERROR(field(kVirtualSizeField, &virtual_bytes));
  RETURN_IF_ERROR(field(kResidentPagesField, &resident_pages));
  const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  stats->cpu_seconds = static_cast<double>(user_ticks + system_ticks) / ticks_per_second;
  stats->start_time_seconds = boot_time + static_cast<double>(start_ticks) / ticks_per_second;
  stats->virtual_bytes = virtual_bytes;
  stats->resident_bytes = resident_pages * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  return absl::OkStatus();
}

absl::StatusOr<double> ParseBootTime(const std::string& path, const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "btime ")) continue;
    int64_t seconds;
    if (!absl::SimpleAtoi(line, &seconds)) break;
    return static_cast<double>(seconds);
  }
  return absl::InternalError(absl::StrCat(path, ": no 'btime <seconds>' line"));
}

absl::StatusOr<double> ParseMaxOpenFiles(const std::string& path, const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Max open files")) continue;
    const std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (words.empty()) break;
    if (words[0] == "unlimited") return std::numeric_limits<double>::infinity();
    int64_t soft_limit;
    if (!absl::SimpleAtoi(words[0], &soft_limit)) break;
    return static_cast<double>(soft_limit);
  }
  return absl::InternalError(absl::StrCat(path, ": no 'Max open files' line"));
}

absl::StatusOr<int64_t> CountOpenFds(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return absl::UnavailableError(absl::StrCat("cannot list ", path));
  int64_t count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") ++count;
  }
  ::closedir(dir);
  // Includes the descriptor of this listing, as other exporters' counts do.
  return count;
}

}  // namespace

absl::StatusOr<ProcessStats> ReadProcessStats(const std::string& proc_root) {
  ProcessStats stats;
  const std::string self = proc_root + "/self";
  ASSIGN_OR_RETURN(std::string system_stat, ReadWholeFile(proc_root + "/stat"));
  ASSIGN_OR_RETURN(double boot_time, ParseBootTime(proc_root + "/stat", system_stat));
  ASSIGN_OR_RETURN(std::string stat, ReadWholeFile(self + "/stat"));
  RETURN_IF_ERROR(ParseStat(self + "/stat", stat, boot_time, &stats));
  ASSIGN_OR_RETURN(std::string limits, ReadWholeFile(self + "/limits"));
  ASSIGN_OR_RETURN(stats.max_fds, ParseMaxOpenFiles(self + "/limits", limits));
  ASSIGN_OR_RETURN(stats.open_fds, CountOpenFds(self + "/fd"));
  return stats;
}

}  // namespace pstrain
