#include "common/summary/record_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checksum/crc32c.h"
#include "common/summary/record_writer.h"

namespace pstrain {
namespace {

constexpr size_t kBufferBytes = 64 << 10;

uint64_t DecodeLittleEndian(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return value;
}

}  // namespace

absl::Status UnframeRecord(absl::string_view bytes, int64_t max_record_bytes,
                           absl::string_view* data, size_t* framed_bytes) {
  if (bytes.size() < kRecordHeaderBytes) {
    return absl::DataLossError(absl::StrCat("truncated: ", bytes.size(), " of the ",
                                            kRecordHeaderBytes, " bytes of a record's header"));
  }
  const uint64_t length = DecodeLittleEndian(bytes.data(), 8);
  const uint32_t length_crc = Crc32cUnmask(DecodeLittleEndian(bytes.data() + 8, 4));
  const uint32_t actual_length_crc = Crc32c(bytes.substr(0, 8));
  if (length_crc != actual_length_crc) {
    return absl::DataLossError(
        absl::StrFormat("the crc32c of its length is 0x%08x, the record says 0x%08x",
                        actual_length_crc, length_crc));
  }
  if (length > static_cast<uint64_t>(max_record_bytes)) {
    return absl::DataLossError(
        absl::StrCat("claims ", length, " bytes, more than the ", max_record_bytes, " allowed"));
  }
  const size_t framed = kRecordHeaderBytes + static_cast<size_t>(length) + kRecordFooterBytes;
  if (bytes.size() < framed) {
    return absl::DataLossError(
        absl::StrCat("truncated: ", bytes.size(), " of its ", framed, " framed bytes"));
  }
  *data = bytes.substr(kRecordHeaderBytes, static_cast<size_t>(length));
  const uint32_t data_crc = Crc32cUnmask(DecodeLittleEndian(data->data() + length, 4));
  const uint32_t actual_data_crc = Crc32c(*data);
  if (data_crc != actual_data_crc) {
    return absl::DataLossError(
        absl::StrFormat("the crc32c of its %d data bytes is 0x%08x, the record says 0x%08x", length,
                        actual_data_crc, data_crc));
  }
  *framed_bytes = framed;
  return absl::OkStatus();
}

RecordReader::RecordReader(SequentialFile* file, std::string file_name, RecordReaderOptions options)
    : file_(file),
      file_name_(std::move(file_name)),
      options_(options),
      offset_(options.start_offset),
      buffer_(kBufferBytes) {}

absl::StatusOr<size_t> RecordReader::ReadFully(size_t n, std::string* out) {
  out->resize(n);
  char* const into = out->data();
  size_t got = std::min(n, buffered_end_ - buffered_begin_);
  std::memcpy(into, buffer_.data() + buffered_begin_, got);
  buffered_begin_ += got;
  while (got < n) {
    // A large rest goes straight into *out; a small one through the buffer,
    // so that small records cost a read call per buffer, not two each.
    const bool direct = n - got >= buffer_.size();
    char* const target = direct ? into + got : buffer_.data();
    const size_t want = direct ? n - got : buffer_.size();
    absl::StatusOr<absl::string_view> piece = file_->Read(want, target);
    if (!piece.ok()) return piece.status();
    if (piece->empty()) break;
    if (piece->data() != target) std::memmove(target, piece->data(), piece->size());
    if (direct) {
      got += piece->size();
      continue;
    }
    const size_t take = std::min(n - got, piece->size());
    std::memcpy(into + got, buffer_.data(), take);
    got += take;
    buffered_begin_ = take;
    buffered_end_ = piece->size();
  }
  out->resize(got);
  return got;
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
