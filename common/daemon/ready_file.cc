#include "common/daemon/ready_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pstrain {

absl::Status WriteReadyFile(const std::string& path, const ReadyInfo& info) {
  const std::string temporary = absl::StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    for (const auto& [key, value] : info) out << key << "=" << value << "\n";
    out.close();
    if (!out) {
      return absl::InternalError(absl::StrCat("cannot write ready file ", temporary));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", temporary, " to ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<ReadyInfo> WaitForReadyFile(const std::string& path, absl::Duration timeout,
                                           const std::function<absl::Status()>& still_running) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    std::ifstream in(path);
    if (in) {
      ReadyInfo info;
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::pair<std::string, std::string> entry = absl::StrSplit(line, absl::MaxSplits('=', 1));
        if (line.find('=') == std::string::npos || entry.first.empty()) {
          return absl::DataLossError(
              absl::StrCat("ready file ", path, ": line '", line, "' is not key=value"));
        }
        info[entry.first] = entry.second;
      }
      return info;
    }
    if (still_running) {
      absl::Status running = still_running();
      if (!running.ok()) return running;
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("no ready file ", path, " after ", absl::FormatDuration(timeout),
                       ": the process did not start serving (see its log)"));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace pstrain
