#ifndef PSTRAIN_COMMON_SUMMARY_EVENT_FILE_READER_H_
#define PSTRAIN_COMMON_SUMMARY_EVENT_FILE_READER_H_

// Reading TensorBoard event files (common/summary/event_file_writer.h) back:
// for tests and for reports drawn from a model_dir. Thread-safe when the
// Env is.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"
#include "common/summary/record_reader.h"
#include "common/summary/scalar_record.h"
#include "protos/summary.pb.h"

namespace pstrain {

// Every event of the file at `path`, in order.
// DataLoss: a damaged record (a CRC mismatch, a truncated record unless
//   options.allow_truncated_tail) or one that is not an Event; the message
//   names the file and the record's offset.
// NotFound: no such file.
absl::StatusOr<std::vector<tensorflow::Event>> ReadEventFile(
    Env& env, const std::string& path, const RecordReaderOptions& options = {});

// The scalar values (simple_value) among `events`, in order; other events
// (file_version, other kinds of values) are left out.
std::vector<ScalarRecord> ScalarsFromEvents(const std::vector<tensorflow::Event>& events);

// The event files in `dir` (names starting events.out.tfevents.), as paths
// sorted by name, which is by creation time for one host. A folder that
// does not exist holds none.
absl::StatusOr<std::vector<std::string>> ListEventFiles(Env& env, const std::string& dir);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_SUMMARY_EVENT_FILE_READER_H_
