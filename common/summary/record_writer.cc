#include "common/summary/record_writer.h"

#include "common/checksum/crc32c.h"

namespace pstrain {
namespace {

void AppendLittleEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

std::string FrameRecord(absl::string_view data) {
  std::string record;
  record.reserve(kRecordHeaderBytes + data.size() + kRecordFooterBytes);
  AppendLittleEndian(data.size(), 8, &record);
  AppendLittleEndian(Crc32cMask(Crc32c(record)), 4, &record);
  record.append(data.data(), data.size());
  AppendLittleEndian(Crc32cMask(Crc32c(data)), 4, &record);
  return record;
}

RecordWriter::RecordWriter(WritableFile* file, int64_t offset) : file_(file), offset_(offset) {}

absl::Status RecordWriter::WriteRecord(absl::string_view data) {
  const std::string record = FrameRecord(data);
  absl::Status status = file_->Append(record);
  if (status.ok()) offset_ += static_cast<int64_t>(record.size());
  return status;
}

}  // namespace pstrain
