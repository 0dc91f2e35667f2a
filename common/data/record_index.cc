#include "common/data/record_index.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "common/data/gzip_access.h"
#include "common/data/in_memory_source.h"
#include "common/random/split_mix.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

// 2: offsets in the stream a gzipped file inflates to, with access points.
constexpr int32_t kIndexVersion = 2;
// Deflate inflates a byte to 1032 at most.
constexpr int64_t kMostInflation = 1032;
// An index holds 8 bytes per block; a larger file is not one of ours.
constexpr int64_t kMaxIndexBytes = int64_t{1} << 30;
// Bytes at each end of a data file that its index's sample checksum covers.
constexpr int64_t kSampleBytes = int64_t{64} << 10;

// The CRC32C of the first and last kSampleBytes of `path` (`size` bytes).
absl::StatusOr<uint32_t> SampleCrc(Env& env, const std::string& path, int64_t size) {
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, env.NewSequentialFile(path));
  std::string scratch(static_cast<size_t>(kSampleBytes), '\0');
  uint32_t crc = 0;
  int64_t position = 0;
  // The head, then the tail (from where the head ended, if they overlap).
  for (const int64_t start : {int64_t{0}, std::max<int64_t>(kSampleBytes, size - kSampleBytes)}) {
    if (start >= size) break;
    if (start > position) RETURN_IF_ERROR(file->Skip(static_cast<uint64_t>(start - position)));
    position = start;
    for (int64_t left = std::min(kSampleBytes, size - start); left > 0;) {
      ASSIGN_OR_RETURN(absl::string_view read, file->Read(static_cast<size_t>(left), &scratch[0]));
      if (read.empty()) {
        return absl::DataLossError(absl::StrCat(path, ": ends before its ", size, " bytes"));
      }
      crc = Crc32cExtend(crc, read.data(), read.size());
      left -= static_cast<int64_t>(read.size());
      position += static_cast<int64_t>(read.size());
    }
  }
  return crc;
}

// Why `index` cannot serve `file` (empty: it can), which is gzipped when
// `gzip`. `windows_bytes`: the size of the file beside it that keeps a
// gzipped file's access windows (0 when there is none).
std::string WhyStale(const RecordFileIndex& index, const FileInfo& file, uint32_t sample_crc,
                     const std::string& decoding, int64_t block_records, bool gzip,
                     int64_t windows_bytes) {
  if (index.version() != kIndexVersion) return absl::StrCat("index version ", index.version());
  if (index.file_bytes() != file.size || index.file_modified_unix_ns() != file.modified_unix_ns ||
      index.file_sample_crc32c() != sample_crc) {
    return "the file changed since it was indexed";
  }
  if (index.block_records() != block_records) {
    return absl::StrCat("indexed in blocks of ", index.block_records(), " records, not ",
                        block_records);
  }
  if (index.decoding() != decoding) return "indexed for other features";
  const int64_t stream = index.stream_bytes();
  if (!gzip && index.gzip_access_points_size() > 0) return "the file's compression changed";
  if (gzip ? stream < 0 || stream / kMostInflation > file.size : stream != file.size) {
    return "index malformed";
  }
  // Every record takes a byte at least, and so does every value.
  if (index.num_records() < 0 || index.num_records() > stream) return "index malformed";
  int64_t dense_values = 0;
  for (int64_t width : index.dense_widths()) {
    if (width < 0 || width > stream) return "index malformed";
    dense_values += width;
  }
  if (dense_values > stream || index.num_classes() < 0 || index.num_classes() > (1 << 24) ||
      index.sparse_ids_end() < 0) {
    return "index malformed";
  }
  const int64_t blocks = (index.num_records() + block_records - 1) / block_records;
  if (index.block_offsets_size() != blocks) return "index malformed";
  for (int i = 0; i < index.block_offsets_size(); ++i) {
    const int64_t offset = index.block_offsets(i);
    if (offset < 0 || offset >= stream || (i > 0 && offset <= index.block_offsets(i - 1))) {
      return "index malformed";
    }
  }
  int64_t windows_end = 0;
  for (int i = 0; i < index.gzip_access_points_size(); ++i) {
    const GzipAccessPoint& point = index.gzip_access_points(i);
    if (point.stream_offset() < 0 || point.stream_offset() > stream ||
        (i > 0 && point.stream_offset() <= index.gzip_access_points(i - 1).stream_offset()) ||
        point.file_offset() < 0 || point.file_offset() > file.size || point.bits() < 0 ||
        point.bits() > 7 || (point.bits() > 0 && point.file_offset() == 0) ||
        point.window_offset() < 0 || point.window_stored_bytes() < 0 || point.window_bytes() < 0 ||
        point.window_bytes() > (32 << 10)) {
      return "index malformed";
    }
    windows_end = std::max(windows_end, point.window_offset() + point.window_stored_bytes());
  }
  if (gzip && index.block_offsets_size() > 0) {
    // A read of a block starts from the point before it.
    if (index.gzip_access_points_size() == 0 ||
        index.gzip_access_points(0).stream_offset() > index.block_offsets(0)) {
      return "index malformed";
    }
    if (windows_end > windows_bytes) return "its gzip access windows are missing";
  }
  return "";
}

// A WritableFile that keeps what is written in a string: a gzipped file's
// access windows, built before it is known whether they can be saved.
class StringFile : public WritableFile {
 public:
  explicit StringFile(std::string* into) : into_(into) {}
  absl::Status Append(absl::string_view data) override {
    into_->append(data.data(), data.size());
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status Sync() override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }

 private:
  std::string* const into_;
};

// Builds the index of `path`, gzipped when `gzip`: its access windows then
// go to *windows.
absl::StatusOr<RecordFileIndex> Build(Env& env, const std::string& path, const RecordFormat& format,
                                      const FileInfo& file, uint32_t sample_crc,
                                      const RecordIndexOptions& options, bool gzip,
                                      std::string* windows) {
  RecordFileIndex index;
  index.set_version(kIndexVersion);
  index.set_file_bytes(file.size);
  index.set_file_modified_unix_ns(file.modified_unix_ns);
  index.set_file_sample_crc32c(sample_crc);
  index.set_decoding(format.DecodingKey());
  index.set_block_records(options.block_records);
  RecordSummary expected;
  expected.dense_widths = options.dense_widths;
  std::unique_ptr<RecordDecoder> decoder =
      format.NewDecoder(options.dense_widths.empty() ? nullptr : &expected);
  // Decoded a block at a time, so that indexing holds one block.
  InMemorySource::Examples block;
  bool integer_labels = true;
  bool plus_minus_one = true;
  int32_t num_classes = 0;
  int64_t sparse_ids_end = 0;
  int64_t records = 0;
  auto end_block = [&] {
    const int32_t classes = ClassCountOf(block.labels);
    integer_labels = integer_labels && classes > 0;
    num_classes = std::max(num_classes, classes);
    plus_minus_one = plus_minus_one && std::all_of(block.labels.begin(), block.labels.end(),
                                                   [](float l) { return l == 1 || l == -1; });
    for (int64_t id : block.sparse_ids) sparse_ids_end = std::max(sparse_ids_end, id + 1);
    block = InMemorySource::Examples();
  };
  StringFile windows_file(windows);
  std::unique_ptr<SequentialFile> stream;
  GzipIndexingFile* inflating = nullptr;
  if (gzip) {
    ASSIGN_OR_RETURN(std::unique_ptr<GzipIndexingFile> opened,
                     GzipIndexingFile::Open(env, path, kGzipAccessSpan, &windows_file));
    inflating = opened.get();
    stream = std::move(opened);
  } else {
    ASSIGN_OR_RETURN(stream, env.NewSequentialFile(path));
  }
  RETURN_IF_ERROR(
      format.Scan(*stream, path, [&](absl::string_view record, int64_t offset) -> absl::Status {
        if (records % options.block_records == 0) {
          if (records > 0) end_block();
          index.add_block_offsets(offset);
          // A block read inflates from the access point before it.
          if (inflating != nullptr) RETURN_IF_ERROR(inflating->MarkBlockStart(offset));
        }
        ++records;
        return decoder->Append(record, &block);
      }));
  if (block.num_examples > 0) end_block();
  index.set_num_records(records);
  for (int64_t width : decoder->dense_widths()) index.add_dense_widths(width);
  index.set_one_id_per_field(decoder->one_id_per_field());
  index.set_num_classes(integer_labels ? num_classes : 0);
  index.set_plus_minus_one_labels(records > 0 && plus_minus_one);
  index.set_sparse_ids_end(sparse_ids_end);
  index.set_stream_bytes(gzip ? inflating->inflated() : file.size);
  if (gzip) {
    for (const GzipAccessPoint& point : inflating->points()) {
      *index.add_gzip_access_points() = point;
    }
  }
  return index;
}

// Writes `contents` to `final_path` under a name of its own first, so that
// two processes indexing the same file at once never mix their bytes.
absl::Status WriteAtomically(Env& env, const std::string& final_path, absl::string_view contents) {
  const std::string temporary = absl::StrCat(
      final_path, ".tmp-", SplitMix64(static_cast<uint64_t>(absl::ToUnixNanos(env.Now()))));
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, env.NewWritableFile(temporary));
    RETURN_IF_ERROR(out->Append(contents));
    RETURN_IF_ERROR(out->Close());
    return env.Rename(temporary, final_path);
  }();
  if (!status.ok()) env.RemoveFile(temporary).IgnoreError();
  return status;
}

// Writes `index` beside the data file, after the access windows it refers
// to (if any), so that a current index never lacks them.
absl::Status Save(Env& env, const std::string& path, const RecordFileIndex& index,
                  const std::string& windows) {
  if (index.gzip_access_points_size() > 0) {
    RETURN_IF_ERROR(WriteAtomically(env, GzipWindowsPath(path), windows));
  }
  return WriteAtomically(env, RecordIndexPath(path), index.SerializeAsString());
}

}  // namespace

RecordSummary SummaryOf(const RecordFileIndex& index) {
  RecordSummary summary;
  summary.dense_widths.assign(index.dense_widths().begin(), index.dense_widths().end());
  summary.one_id_per_field = index.one_id_per_field();
  summary.num_classes = index.num_classes();
  summary.plus_minus_one_labels = index.plus_minus_one_labels();
  summary.sparse_ids_end = index.sparse_ids_end();
  return summary;
}

absl::StatusOr<RecordFileIndex> LoadOrBuildRecordIndex(Env& env, const std::string& path,
                                                       const RecordFormat& format,
                                                       const RecordIndexOptions& options,
                                                       RecordIndexOutcome* outcome) {
  RecordIndexOutcome ignored;
  if (outcome == nullptr) outcome = &ignored;
  *outcome = RecordIndexOutcome();
  if (options.block_records <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("an index needs blocks of at least one record, not ", options.block_records));
  }
  ASSIGN_OR_RETURN(const FileInfo file, env.Stat(path));
  ASSIGN_OR_RETURN(const uint32_t sample_crc, SampleCrc(env, path, file.size));
  ASSIGN_OR_RETURN(const bool gzip, format.IsGzipped(env, path));
  const std::string index_path = RecordIndexPath(path);
  std::string stale = "no index yet";
  absl::StatusOr<std::string> saved = ReadWholeFile(env, index_path, kMaxIndexBytes);
  if (saved.ok()) {
    absl::StatusOr<FileInfo> windows = env.Stat(GzipWindowsPath(path));
    RecordFileIndex index;
    stale = index.ParseFromString(*saved)
                ? WhyStale(index, file, sample_crc, format.DecodingKey(), options.block_records,
                           gzip, windows.ok() ? windows->size : 0)
                : "index unreadable";
    if (stale.empty()) return index;
  }
  std::string windows;
  ASSIGN_OR_RETURN(RecordFileIndex index,
                   Build(env, path, format, file, sample_crc, options, gzip, &windows));
  outcome->built = true;
  outcome->why_built = stale;
  LOG(INFO) << "indexed " << path << ": " << index.num_records() << " records in "
            << index.block_offsets_size() << " blocks (" << stale << ")";
  if (options.save) outcome->saved = Save(env, path, index, windows);
  // Access windows not saved beside the file stay with the index.
  if (gzip && (!options.save || !outcome->saved.ok())) outcome->gzip_windows = std::move(windows);
  if (options.save) {
    if (!outcome->saved.ok()) {
      LOG(WARNING) << "cannot keep the index of " << path << " beside it ("
                   << outcome->saved.message()
                   << "); every process that reads the file indexes it again, unless "
                   << "`pstrain index-data` is run by a user who can write the folder";
    }
  }
  return index;
}

}  // namespace pstrain
