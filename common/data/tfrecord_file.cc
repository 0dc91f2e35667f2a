#include "common/data/tfrecord_file.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/data/gzip_file.h"
#include "common/status/status_macros.h"
#include "common/summary/record_reader.h"

namespace pstrain {

absl::StatusOr<bool> IsGzippedTfRecord(Env& env, const std::string& path,
                                       TfRecordSource::Compression compression) {
  switch (compression) {
    case TfRecordSource::TFRECORD_COMPRESSION_NONE:
      return false;
    case TfRecordSource::TFRECORD_COMPRESSION_GZIP:
      return true;
    default:
      return IsGzipFile(env, path);
  }
}

absl::Status ForEachTfRecord(
    Env& env, const std::string& path, bool gzip, const TfRecordSpan& span,
    absl::FunctionRef<absl::Status(absl::string_view record, int64_t index, int64_t offset)>
        visit) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, OpenSequentialFile(env, path, gzip));
  if (span.offset > 0) RETURN_IF_ERROR(file->Skip(span.offset));
  return ForEachTfRecordIn(*file, path, span, visit);
}

absl::Status ForEachTfRecordIn(
    SequentialFile& file, const std::string& path, const TfRecordSpan& span,
    absl::FunctionRef<absl::Status(absl::string_view record, int64_t index, int64_t offset)>
        visit) {
  RecordReaderOptions options;
  options.start_offset = span.offset;
  RecordReader reader(&file, path, options);
  std::string record;
  for (int64_t read = 0; span.max_records < 0 || read < span.max_records; ++read) {
    const int64_t index = span.first_index + read;
    const int64_t offset = reader.offset();
    absl::Status status = reader.ReadRecord(&record);
    if (absl::IsOutOfRange(status)) {
      if (span.max_records < 0) return absl::OkStatus();
      return absl::DataLossError(absl::StrCat(path, ": ends at offset ", offset, " before record ",
                                              index, " (expected ", span.max_records,
                                              " records from offset ", span.offset, ")"));
    }
    RETURN_IF_ERROR(status);
    status = visit(record, index, offset);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat(path, ": record ", index, " at offset ",
                                                      offset, ": ", status.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace pstrain
