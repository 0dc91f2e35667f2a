#ifndef PSTRAIN_COMMON_DAEMON_READY_FILE_H_
#define PSTRAIN_COMMON_DAEMON_READY_FILE_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pstrain {

// A daemon started with port 0 tells whoever launched it (the local cluster
// launcher, end-to-end tests) which ports it bound by writing a small
// "key=value" file once it serves. The file appears atomically (written
// under a temporary name, then renamed), so a reader never sees half of it.
//
// Keys written by every daemon: grpc (host:port), metrics (host:port), pid.
using ReadyInfo = std::map<std::string, std::string>;

// Internal: the file cannot be written (the message names the path).
absl::Status WriteReadyFile(const std::string& path, const ReadyInfo& info);

// Waits until `path` exists and parses it. DeadlineExceeded after `timeout`;
// DataLoss when a line is not key=value. `still_running`, when given, is
// asked between looks; its error (the process exited) ends the wait at once.
absl::StatusOr<ReadyInfo> WaitForReadyFile(
    const std::string& path, absl::Duration timeout,
    const std::function<absl::Status()>& still_running = nullptr);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DAEMON_READY_FILE_H_
