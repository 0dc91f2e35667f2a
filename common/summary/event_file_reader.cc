#include "common/summary/event_file_reader.h"

#include <algorithm>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/checkpoint/file_path.h"
#include "common/status/status_macros.h"
#include "common/summary/event_file_writer.h"

namespace pstrain {

absl::StatusOr<std::vector<tensorflow::Event>> ReadEventFile(Env& env, const std::string& path,
                                                             const RecordReaderOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env.NewSequentialFile(path));
  RecordReader reader(file.get(), path, options);
  std::vector<tensorflow::Event> events;
  std::string record;
  for (;;) {
    const int64_t offset = reader.offset();
    absl::Status status = reader.ReadRecord(&record);
    if (absl::IsOutOfRange(status)) break;
    RETURN_IF_ERROR(status);
    tensorflow::Event event;
    if (!event.ParseFromString(record)) {
      return absl::DataLossError(
          absl::StrCat(path, ": record at offset ", offset, " is not a tensorflow.Event"));
    }
    events.push_back(std::move(event));
  }
  return events;
}

std::vector<ScalarRecord> ScalarsFromEvents(const std::vector<tensorflow::Event>& events) {
  std::vector<ScalarRecord> scalars;
  for (const tensorflow::Event& event : events) {
    if (!event.has_summary()) continue;
    for (const tensorflow::Summary::Value& value : event.summary().value()) {
      if (!value.has_simple_value()) continue;
      scalars.push_back(
          ScalarRecord{event.step(), event.wall_time(), value.tag(), value.simple_value()});
    }
  }
  return scalars;
}

absl::StatusOr<std::vector<std::string>> ListEventFiles(Env& env, const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> names = env.ListDir(dir);
  if (absl::IsNotFound(names.status())) return std::vector<std::string>();
  RETURN_IF_ERROR(names.status());
  std::vector<std::string> paths;
  for (const std::string& name : *names) {
    if (absl::StartsWith(name, kEventFilePrefix)) paths.push_back(JoinPath(dir, name));
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace pstrain
