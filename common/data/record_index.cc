#include "common/data/record_index.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/checkpoint/whole_file.h"
#include "common/checksum/crc32c.h"
#include "common/data/in_memory_source.h"
#include "common/random/split_mix.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
namespace {

constexpr int32_t kIndexVersion = 1;
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

// Why `index` cannot serve `file` (empty: it can).
std::string WhyStale(const RecordFileIndex& index, const FileInfo& file, uint32_t sample_crc,
                     const std::string& decoding, int64_t block_records) {
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
  // Every record takes a byte at least, and so does every value.
  if (index.num_records() < 0 || index.num_records() > file.size) return "index malformed";
  int64_t dense_values = 0;
  for (int64_t width : index.dense_widths()) {
    if (width < 0 || width > file.size) return "index malformed";
    dense_values += width;
  }
  if (dense_values > file.size || index.num_classes() < 0 || index.num_classes() > (1 << 24) ||
      index.sparse_ids_end() < 0) {
    return "index malformed";
  }
  const int64_t blocks = (index.num_records() + block_records - 1) / block_records;
  if (index.block_offsets_size() != blocks) return "index malformed";
  for (int i = 0; i < index.block_offsets_size(); ++i) {
    const int64_t offset = index.block_offsets(i);
    if (offset < 0 || offset >= file.size || (i > 0 && offset <= index.block_offsets(i - 1))) {
      return "index malformed";
    }
  }
  return "";
}

absl::StatusOr<RecordFileIndex> Build(Env& env, const std::string& path, const RecordFormat& format,
                                      const FileInfo& file, uint32_t sample_crc,
                                      const RecordIndexOptions& options) {
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
  RETURN_IF_ERROR(
      format.Scan(env, path, [&](absl::string_view record, int64_t offset) -> absl::Status {
        if (records % options.block_records == 0) {
          if (records > 0) end_block();
          index.add_block_offsets(offset);
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
  return index;
}

// Writes `index` beside the data file under a name of its own first, so
// that two processes indexing the same file at once never mix their bytes.
absl::Status Save(Env& env, const std::string& path, const RecordFileIndex& index) {
  const std::string final_path = RecordIndexPath(path);
  const std::string temporary = absl::StrCat(
      final_path, ".tmp-", SplitMix64(static_cast<uint64_t>(absl::ToUnixNanos(env.Now()))));
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, env.NewWritableFile(temporary));
    RETURN_IF_ERROR(out->Append(index.SerializeAsString()));
    RETURN_IF_ERROR(out->Close());
    return env.Rename(temporary, final_path);
  }();
  if (!status.ok()) env.RemoveFile(temporary).IgnoreError();
  return status;
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
  const std::string index_path = RecordIndexPath(path);
  std::string stale = "no index yet";
  absl::StatusOr<std::string> saved = ReadWholeFile(env, index_path, kMaxIndexBytes);
  if (saved.ok()) {
    RecordFileIndex index;
    stale = index.ParseFromString(*saved)
                ? WhyStale(index, file, sample_crc, format.DecodingKey(), options.block_records)
                : "index unreadable";
    if (stale.empty()) return index;
  }
  ASSIGN_OR_RETURN(RecordFileIndex index, Build(env, path, format, file, sample_crc, options));
  outcome->built = true;
  outcome->why_built = stale;
  LOG(INFO) << "indexed " << path << ": " << index.num_records() << " records in "
            << index.block_offsets_size() << " blocks (" << stale << ")";
  if (options.save) {
    outcome->saved = Save(env, path, index);
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
