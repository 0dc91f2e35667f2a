#include "common/summary/record_reader.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checksum/crc32c.h"
#include "common/summary/record_writer.h"

namespace pstrain {
namespace {

constexpr size_t kScratchBytes = 64 << 10;

uint64_t DecodeLittleEndian(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return value;
}

}  // namespace

RecordReader::RecordReader(SequentialFile* file, std::string file_name, RecordReaderOptions options)
    : file_(file), file_name_(std::move(file_name)), options_(options), scratch_(kScratchBytes) {}

absl::StatusOr<size_t> RecordReader::ReadFully(size_t n, std::string* out) {
  out->clear();
  while (out->size() < n) {
    const size_t want = std::min(n - out->size(), scratch_.size());
    absl::StatusOr<absl::string_view> piece = file_->Read(want, scratch_.data());
    if (!piece.ok()) return piece.status();
    if (piece->empty()) break;
    out->append(piece->data(), piece->size());
  }
  return out->size();
}

absl::Status RecordReader::Truncated(const char* part, size_t want, size_t got) {
  if (options_.allow_truncated_tail) return absl::OutOfRangeError("end of file");
  return absl::DataLossError(absl::StrCat(file_name_, ": record at offset ", offset_,
                                          " is truncated: the file ends after ", got, " of the ",
                                          want, " bytes of its ", part));
}

absl::Status RecordReader::ReadRecord(std::string* record) {
  std::string header;
  absl::StatusOr<size_t> got = ReadFully(kRecordHeaderBytes, &header);
  if (!got.ok()) return got.status();
  if (*got == 0) return absl::OutOfRangeError(absl::StrCat(file_name_, ": end of file"));
  if (*got < kRecordHeaderBytes) return Truncated("header", kRecordHeaderBytes, *got);

  const uint64_t length = DecodeLittleEndian(header.data(), 8);
  const uint32_t length_crc = Crc32cUnmask(DecodeLittleEndian(header.data() + 8, 4));
  const uint32_t actual_length_crc = Crc32c(absl::string_view(header.data(), 8));
  if (length_crc != actual_length_crc) {
    return absl::DataLossError(absl::StrFormat(
        "%s: record at offset %d: the crc32c of its length is 0x%08x, the record says 0x%08x",
        file_name_, offset_, actual_length_crc, length_crc));
  }
  if (length > static_cast<uint64_t>(options_.max_record_bytes)) {
    return absl::DataLossError(absl::StrCat(file_name_, ": record at offset ", offset_, " claims ",
                                            length, " bytes, more than the ",
                                            options_.max_record_bytes, " allowed"));
  }
  const size_t body_bytes = static_cast<size_t>(length) + kRecordFooterBytes;
  got = ReadFully(body_bytes, record);
  if (!got.ok()) return got.status();
  if (*got < body_bytes) return Truncated("data and checksum", body_bytes, *got);

  const uint32_t data_crc = Crc32cUnmask(DecodeLittleEndian(record->data() + length, 4));
  record->resize(length);
  const uint32_t actual_data_crc = Crc32c(*record);
  if (data_crc != actual_data_crc) {
    return absl::DataLossError(absl::StrFormat(
        "%s: record at offset %d: the crc32c of its %d data bytes is 0x%08x, the record says "
        "0x%08x",
        file_name_, offset_, length, actual_data_crc, data_crc));
  }
  offset_ += static_cast<int64_t>(kRecordHeaderBytes + body_bytes);
  return absl::OkStatus();
}

}  // namespace pstrain
