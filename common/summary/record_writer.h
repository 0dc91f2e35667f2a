#ifndef PSTRAIN_COMMON_SUMMARY_RECORD_WRITER_H_
#define PSTRAIN_COMMON_SUMMARY_RECORD_WRITER_H_

// TFRecord framing, the container of TensorFlow event files. Each record:
//
//   uint64 length          little-endian, of data
//   uint32 masked_crc32c   of the 8 length bytes
//   byte   data[length]
//   uint32 masked_crc32c   of data
//
// CRCs are CRC32C masked with Crc32cMask (common/checksum/crc32c.h), the
// same masking TensorFlow applies, so files are interchangeable.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/checkpoint/env.h"

namespace pstrain {

inline constexpr size_t kRecordHeaderBytes = 12;  // length and its CRC
inline constexpr size_t kRecordFooterBytes = 4;   // CRC of the data

// The framed bytes of one record holding `data`.
std::string FrameRecord(absl::string_view data);

// Appends records to a file. Not thread-safe.
class RecordWriter {
 public:
  // `file` must outlive this; `offset` is its current size (0 for a new
  // file).
  explicit RecordWriter(WritableFile* file, int64_t offset = 0);
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one record in a single WritableFile::Append, so a reader of a
  // flushed file never sees part of a record that was flushed whole.
  absl::Status WriteRecord(absl::string_view data);

  // Where the next record starts.
  int64_t offset() const { return offset_; }

 private:
  WritableFile* const file_;
  int64_t offset_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_SUMMARY_RECORD_WRITER_H_
