#ifndef PSTRAIN_COMMON_SUMMARY_RECORD_READER_H_
#define PSTRAIN_COMMON_SUMMARY_RECORD_READER_H_

// Reads TFRecord files (framing in common/summary/record_writer.h),
// checking both CRCs of every record.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"

namespace pstrain {

struct RecordReaderOptions {
  // A record cut short by the end of the file ends the reading like the
  // end of the file would, instead of being DataLoss. Default false. Set it
  // for a file that may still be written to (its writer flushes whole
  // records, but a crash can leave part of one).
  bool allow_truncated_tail = false;
  // A record claiming more data than this is DataLoss, so a damaged length
  // cannot exhaust memory. Default 64 MiB; summaries are far smaller.
  int64_t max_record_bytes = int64_t{64} << 20;
  // Where in its file `file` stands when the reader gets it (a reader
  // started at a record inside the file, after a Skip): offset() and errors
  // then count from the file's start. Default 0.
  int64_t start_offset = 0;
};

// The record framed at the start of `bytes`, all of it in memory: its data
// (a view of `bytes`), and the framed record's size in *framed_bytes.
// DataLoss saying what is wrong, for the caller to prefix with the file
// and offset: a length or data CRC that does not match, a length over
// `max_record_bytes`, or `bytes` ending inside the record.
absl::Status UnframeRecord(absl::string_view bytes, int64_t max_record_bytes,
                           absl::string_view* data, size_t* framed_bytes);

// Not thread-safe.
class RecordReader {
 public:
  // `file` must outlive this; `file_name` names it in errors.
  RecordReader(SequentialFile* file, std::string file_name, RecordReaderOptions options = {});
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Reads the next record's data into *record.
  // OutOfRange: the end of the file (nothing more to read).
  // DataLoss: a CRC does not match, or the file ends inside a record, or a
  //   length is over the cap; the message names the file and the offset of
  //   the record. Reading cannot go on after it.
  // Other codes: from the file.
  absl::Status ReadRecord(std::string* record);

  // The offset of the next record.
  int64_t offset() const { return offset_; }

 private:
  // Reads exactly n bytes into *out unless the file ends first; returns how
  // many were read.
  absl::StatusOr<size_t> ReadFully(size_t n, std::string* out);
  absl::Status Truncated(const char* part, size_t want, size_t got);

  SequentialFile* const file_;
  const std::string file_name_;
  const RecordReaderOptions options_;
  int64_t offset_ = 0;
  // Read ahead of the record being read: [buffered_begin_, buffered_end_).
  std::vector<char> buffer_;
  size_t buffered_begin_ = 0;
  size_t buffered_end_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_SUMMARY_RECORD_READER_H_
