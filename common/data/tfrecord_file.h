#ifndef PSTRAIN_COMMON_DATA_TFRECORD_FILE_H_
#define PSTRAIN_COMMON_DATA_TFRECORD_FILE_H_

// The records of one TFRecord file, for the readers that hold a data set in
// memory (tfrecord_reader.h), index it and stream it by blocks
// (tfrecord_format.h).

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"
#include "protos/job.pb.h"

namespace pstrain {

// Whether `path` is read through gzip, as `compression` says; AUTO looks at
// the file's first bytes.
absl::StatusOr<bool> IsGzippedTfRecord(Env& env, const std::string& path,
                                       TfRecordSource::Compression compression);

// Where to read and how much.
struct TfRecordSpan {
  // The byte offset of a record's start (in the inflated stream of a
  // gzipped file, which is read from its start) and that record's index in
  // the file, for errors.
  int64_t offset = 0;
  int64_t first_index = 0;
  // Records to read; -1: to the end of the file.
  int64_t max_records = -1;
};

// Calls visit(record, index, offset) for each record of the span in order,
// each record's length and data CRCs checked. An error of `visit` ends the
// reading and comes back prefixed with "<path>: record <index> at offset
// <offset>: ". DataLoss naming the file and offset: a CRC that does not
// match, a truncated record, or the file ending before max_records.
absl::Status ForEachTfRecord(
    Env& env, const std::string& path, bool gzip, const TfRecordSpan& span,
    absl::FunctionRef<absl::Status(absl::string_view record, int64_t index, int64_t offset)> visit);

// The same over `file`, opened at span.offset of `path`'s records' stream.
absl::Status ForEachTfRecordIn(
    SequentialFile& file, const std::string& path, const TfRecordSpan& span,
    absl::FunctionRef<absl::Status(absl::string_view record, int64_t index, int64_t offset)> visit);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_TFRECORD_FILE_H_
