#ifndef PSTRAIN_CLIENT_TASK_LOG_READER_H_
#define PSTRAIN_CLIENT_TASK_LOG_READER_H_

// Reading the log of one task of a local cluster as it grows, each line with
// the time it was logged, so that `pstrain logs` can pick a job's lines by
// the job's start and end and merge several tasks' lines in time order.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"

namespace pstrain {

// One line of a task's log.
struct LogLine {
  // From the line's glog prefix. A line without one (the rest of a message
  // of several lines, a marker `pstrain local` writes between two runs of
  // a process) takes the time of the line before it; at the start of a
  // file, absl::InfinitePast().
  absl::Time time;
  std::string text;  // without the newline
};

// The time in the prefix glog puts on every line
// ("I20261207 04:15:00.123456  1234 file.cc:12] ..."), read in `zone`
// (glog writes local time); nullopt for a line without that prefix.
std::optional<absl::Time> GlogLineTime(absl::string_view line, absl::TimeZone zone);

// Reads the lines a log file gains, as `tail -f` does. Not thread-safe.
class TaskLogReader {
 public:
  // `env` outlives the reader.
  TaskLogReader(Env& env, std::string path, absl::TimeZone zone);

  // The whole lines added since the last call (every line on the first),
  // oldest first; a line whose end is not written yet comes with a later
  // call. A file that does not exist yet has no lines; one that shrank (a
  // new cluster started in the same run folder) is read again from its
  // start. Errors of the Env other than NotFound.
  absl::StatusOr<std::vector<LogLine>> ReadNewLines();

  const std::string& path() const { return path_; }

 private:
  Env& env_;
  const std::string path_;
  const absl::TimeZone zone_;
  // Bytes read: up to the end of the last whole line.
  int64_t offset_ = 0;
  absl::Time last_time_ = absl::InfinitePast();
};

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_TASK_LOG_READER_H_
