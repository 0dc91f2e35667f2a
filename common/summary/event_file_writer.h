#ifndef PSTRAIN_COMMON_SUMMARY_EVENT_FILE_WRITER_H_
#define PSTRAIN_COMMON_SUMMARY_EVENT_FILE_WRITER_H_

// TensorBoard event files: TFRecord files (common/summary/record_writer.h)
// of tensorflow.Event messages (protos/summary.proto), named
// events.out.tfevents.<unix seconds>.<hostname>, the first event carrying
// file_version "brain.Event:2". TensorBoard reads every such file in a
// folder, so each writer starts a file of its own.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "common/summary/record_writer.h"
#include "protos/summary.pb.h"

namespace pstrain {

inline constexpr absl::string_view kEventFileVersion = "brain.Event:2";
inline constexpr absl::string_view kEventFilePrefix = "events.out.tfevents.";

// `t` as an Event's wall_time: seconds since the Unix epoch, to the
// microsecond (which a double holds exactly for this century's times).
double EventWallTime(absl::Time t);

// An Event holding one scalar (as a float, the type TensorBoard plots).
tensorflow::Event ScalarEvent(int64_t step, absl::string_view tag, double value,
                              absl::Time wall_time);

// This machine's host name, for event file names; "localhost" when it
// cannot be had.
std::string LocalHostname();

// Not thread-safe.
class EventFileWriter {
 public:
  // Creates `dir` (and parents) when missing and a new event file in it
  // named after env->Now() and `hostname` (".1", ".2", ... appended if that
  // name is taken), and writes the file_version event. `env` must outlive
  // the writer.
  // InvalidArgument: `hostname` is empty or holds a '/'.
  // Other codes: from the Env.
  static absl::StatusOr<std::unique_ptr<EventFileWriter>> Create(Env* env, const std::string& dir,
                                                                 absl::string_view hostname);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  absl::Status WriteEvent(const tensorflow::Event& event);
  // Hands written events to the operating system, where TensorBoard sees
  // them.
  absl::Status Flush();
  // Flushes, fsyncs and closes. Later calls fail with FailedPrecondition.
  absl::Status Close();

  const std::string& path() const { return path_; }

 private:
  EventFileWriter(std::string path, std::unique_ptr<WritableFile> file);

  const std::string path_;
  std::unique_ptr<WritableFile> file_;  // null once closed
  RecordWriter records_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_SUMMARY_EVENT_FILE_WRITER_H_
