#include "common/data/streamed_source.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data/file_patterns.h"
#include "common/data/gzip_access.h"
#include "common/data/record_index.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {

namespace {

// The summaries of a data set's files as one. InvalidArgument: dense
// features of another width than in an earlier file.
absl::Status MergeSummary(const RecordSummary& file_summary, const std::string& file,
                          const std::string& widths_from, RecordSummary* merged) {
  if (file_summary.dense_widths != merged->dense_widths) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": the dense features hold [",
                                                   absl::StrJoin(file_summary.dense_widths, ", "),
                                                   "] values; in ", widths_from, " they hold [",
                                                   absl::StrJoin(merged->dense_widths, ", "), "]"));
  }
  merged->one_id_per_field = merged->one_id_per_field && file_summary.one_id_per_field;
  merged->num_classes = merged->num_classes == 0 || file_summary.num_classes == 0
                            ? 0
                            : std::max(merged->num_classes, file_summary.num_classes);
  merged->plus_minus_one_labels =
      merged->plus_minus_one_labels && file_summary.plus_minus_one_labels;
  merged->sparse_ids_end = std::max(merged->sparse_ids_end, file_summary.sparse_ids_end);
  return absl::OkStatus();
}

}  // namespace

StreamedSource::StreamedSource(Env& env, std::unique_ptr<const RecordFormat> format,
                               StreamingOptions options)
    : env_(env), format_(std::move(format)), options_(options) {}

absl::StatusOr<std::unique_ptr<StreamedSource>> StreamedSource::Open(
    Env& env, std::unique_ptr<const RecordFormat> format, const StreamingOptions& options) {
  if (options.block_records <= 0 || options.window_blocks <= 0 || options.cached_blocks < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "streaming needs blocks of at least one record and windows of at least one block, not ",
        options.block_records, " and ", options.window_blocks));
  }
  std::unique_ptr<StreamedSource> source(new StreamedSource(env, std::move(format), options));
  const RecordFormat& files_format = *source->format_;
  ASSIGN_OR_RETURN(source->files_, ExpandFilePatterns(files_format.patterns()));

  RecordIndexOptions indexing;
  indexing.block_records = options.block_records;
  indexing.save = options.save_indexes;
  RecordSummary& summary = source->summary_;
  std::string widths_from;  // the first file with records
  int64_t records = 0;
  source->gzip_.resize(source->files_.size());
  for (size_t f = 0; f < source->files_.size(); ++f) {
    const std::string& file = source->files_[f];
    RecordIndexOutcome outcome;
    ASSIGN_OR_RETURN(const RecordFileIndex index,
                     LoadOrBuildRecordIndex(env, file, files_format, indexing, &outcome));
    if (index.num_records() == 0) continue;
    GzipAccess& gzip = source->gzip_[f];
    gzip.points.assign(index.gzip_access_points().begin(), index.gzip_access_points().end());
    gzip.windows = std::move(outcome.gzip_windows);
    if (widths_from.empty()) {
      widths_from = file;
      summary = SummaryOf(index);
      indexing.dense_widths = summary.dense_widths;
    } else {
      RETURN_IF_ERROR(MergeSummary(SummaryOf(index), file, widths_from, &summary));
    }
    for (int b = 0; b < index.block_offsets_size(); ++b) {
      const int64_t first = int64_t{b} * options.block_records;
      const int64_t end =
          b + 1 < index.block_offsets_size() ? index.block_offsets(b + 1) : index.stream_bytes();
      source->places_.push_back({static_cast<int32_t>(f), index.block_offsets(b), end, first});
      records += std::min(options.block_records, index.num_records() - first);
      source->layout_.block_ends.push_back(records);
    }
  }
  if (records == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        files_format.name(), ": no records in ", source->files_.size(),
        " file(s): ", source->files_.front(), source->files_.size() > 1 ? ", ..." : ""));
  }
  source->layout_.window_blocks = options.window_blocks;
  DatasetInfo& info = source->info_;
  info.num_examples = records;
  for (int64_t width : summary.dense_widths) info.dense_dim += width;
  files_format.Describe(summary, &info);
  return source;
}

StreamedSource::~StreamedSource() {
  absl::MutexLock lock(&cache_mu_);
  if (blocks_read_ > 0) {
    LOG(INFO) << format_->name() << ": read " << blocks_read_ << " blocks of the "
              << layout_.num_blocks() << " in " << files_.size() << " file(s)";
  }
}

absl::Status StreamedSource::ReadStreamAt(int32_t file_index, int64_t offset,
                                          std::string* into) const {
  const std::string& file = files_[file_index];
  const GzipAccess& gzip = gzip_[file_index];
  if (gzip.points.empty()) return ReadFileRange(env_, file, offset, into);
  const GzipAccessPoint* point = AccessPointBefore(gzip.points, offset);
  if (point == nullptr) {
    return absl::DataLossError(
        absl::StrCat(file, ": no access point before stream offset ", offset));
  }
  if (!gzip.windows.empty()) {
    const absl::string_view windows(gzip.windows);
    if (point->window_offset() + point->window_stored_bytes() >
        static_cast<int64_t>(windows.size())) {
      return absl::DataLossError(absl::StrCat(file, ": an access window outside those built"));
    }
    return ReadGzipAt(env_, file, *point,
                      windows.substr(static_cast<size_t>(point->window_offset()),
                                     static_cast<size_t>(point->window_stored_bytes())),
                      offset, into);
  }
  ASSIGN_OR_RETURN(const std::string stored, ReadStoredWindow(env_, GzipWindowsPath(file), *point));
  return ReadGzipAt(env_, file, *point, stored, offset, into);
}

absl::Status StreamedSource::Read(int64_t block, Block* into) const {
  const BlockPlace& place = places_[block];
  const std::string& file = files_[place.file];
  const size_t expected =
      static_cast<size_t>(layout_.block_ends[block] - layout_.block_begin(block));
  into->records.clear();
  into->offsets.clear();
  // Resized, not cleared: the storage stays for the next block.
  into->bytes.resize(static_cast<size_t>(place.end - place.offset));
  absl::Status read = ReadStreamAt(place.file, place.offset, &into->bytes);
  if (read.ok()) {
    read = format_->Split(
        into->bytes, place.offset, [&](absl::string_view record, int64_t offset) -> absl::Status {
          if (into->records.size() == expected) {
            return absl::DataLossError(
                absl::StrCat("more than the block's ", expected, " records, at offset ", offset));
          }
          into->records.push_back(record);
          into->offsets.push_back(offset);
          return absl::OkStatus();
        });
    if (read.ok() && into->records.size() != expected) {
      read = absl::DataLossError(absl::StrCat(into->records.size(), " records from offset ",
                                              place.offset, " to ", place.end, ", not ", expected));
    }
    if (!read.ok()) read = absl::Status(read.code(), absl::StrCat(file, ": ", read.message()));
  }
  if (!read.ok()) {
    return absl::Status(read.code(),
                        absl::StrCat(read.message(), " (the file no longer holds what its index ",
                                     RecordIndexPath(file), " says)"));
  }
  return absl::OkStatus();
}

std::shared_ptr<StreamedSource::Block> StreamedSource::FreeBlockLocked() const {
  auto reusable = std::find_if(evicted_.begin(), evicted_.end(),
                               [](const auto& block) { return block.use_count() == 1; });
  if (reusable == evicted_.end()) return std::make_shared<Block>();
  std::shared_ptr<Block> block = std::move(*reusable);
  evicted_.erase(reusable);
  return block;
}

absl::StatusOr<std::shared_ptr<const StreamedSource::Block>> StreamedSource::BlockAt(
    int64_t block) const {
  const size_t capacity = static_cast<size_t>(
      options_.cached_blocks > 0 ? options_.cached_blocks : 2 * options_.window_blocks + 1);
  std::shared_ptr<Block> slot;
  {
    absl::MutexLock lock(&cache_mu_);
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if ((*it)->index != block) continue;
      cache_.splice(cache_.begin(), cache_, it);
      std::shared_ptr<Block> found = cache_.front();
      // Another thread is reading it: one read serves both.
      const Block* waited = found.get();
      cache_mu_.Await(absl::Condition(
          +[](const Block* b) { return b->state != Block::State::kReading; }, waited));
      if (found->state == Block::State::kFailed) return found->failure;
      return std::shared_ptr<const Block>(std::move(found));
    }
    slot = FreeBlockLocked();
    slot->index = block;
    slot->state = Block::State::kReading;
    cache_.push_front(slot);
    while (cache_.size() > capacity) {
      evicted_.push_back(std::move(cache_.back()));
      cache_.pop_back();
    }
    // Blocks still held when evicted are few (the batches' being
    // gathered); past that many, the oldest go.
    if (evicted_.size() > capacity) evicted_.erase(evicted_.begin());
  }
  // Only this thread writes the block until it leaves kReading.
  const absl::Status read = Read(block, slot.get());
  absl::MutexLock lock(&cache_mu_);
  if (!read.ok()) {
    // Those waiting for it see the error; a later reader tries again.
    slot->state = Block::State::kFailed;
    slot->failure = read;
    cache_.remove(slot);
    return read;
  }
  slot->state = Block::State::kReady;
  ++blocks_read_;
  return std::shared_ptr<const Block>(std::move(slot));
}

absl::Status StreamedSource::Fill(absl::Span<const int64_t> indices, ExampleBatch* batch) const {
  for (int64_t record : indices) {
    if (record < 0 || record >= info_.num_examples) {
      return absl::OutOfRangeError(
          absl::StrCat("example ", record, " outside [0, ", info_.num_examples, ")"));
    }
  }
  // The batch's blocks, distinct and sorted, in hand before parsing starts.
  std::vector<int64_t> block_ids(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) block_ids[i] = layout_.BlockOf(indices[i]);
  std::sort(block_ids.begin(), block_ids.end());
  block_ids.erase(std::unique(block_ids.begin(), block_ids.end()), block_ids.end());
  std::vector<std::shared_ptr<const Block>> blocks(block_ids.size());
  for (size_t b = 0; b < block_ids.size(); ++b) {
    ASSIGN_OR_RETURN(blocks[b], BlockAt(block_ids[b]));
  }

  absl::MutexLock lock(&parse_mu_);
  if (decoder_ == nullptr) decoder_ = format_->NewDecoder(&summary_);
  // Decoded in the batch's order, so that row i of parsed_ is example i.
  parsed_.num_examples = 0;
  parsed_.dense_floats.clear();
  parsed_.sparse_ids.clear();
  parsed_.sparse_values.clear();
  parsed_.row_splits.clear();
  parsed_.labels.clear();
  for (int64_t record : indices) {
    const int64_t block = layout_.BlockOf(record);
    const Block& held = *blocks[static_cast<size_t>(
        std::lower_bound(block_ids.begin(), block_ids.end(), block) - block_ids.begin())];
    const size_t k = static_cast<size_t>(record - layout_.block_begin(block));
    absl::Status parsed = decoder_->Append(held.records[k], &parsed_);
    if (!parsed.ok()) {
      const BlockPlace& place = places_[block];
      return absl::Status(
          parsed.code(),
          absl::StrCat(files_[place.file], ": record ", place.first_index + k, " at offset ",
                       held.offsets[k], ": ", parsed.message(), " (the file no longer holds what ",
                       "its index ", RecordIndexPath(files_[place.file]), " says)"));
    }
  }
  std::vector<ExampleRow> rows(indices.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = {&parsed_, static_cast<int64_t>(i)};
  return GatherExamples(rows, info_.dense_dim, info_.sparse_dim > 0, batch);
}

int64_t StreamedSource::blocks_read() const {
  absl::MutexLock lock(&cache_mu_);
  return blocks_read_;
}

}  // namespace pstrain
