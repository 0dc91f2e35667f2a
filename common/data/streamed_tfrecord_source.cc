#include "common/data/streamed_tfrecord_source.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/file_patterns.h"
#include "common/data/tf_example_decoder.h"
#include "common/data/tfrecord_file.h"
#include "common/data/tfrecord_index.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {

StreamedTfRecordSource::StreamedTfRecordSource(Env& env, TfRecordSource spec,
                                               StreamingOptions options)
    : env_(env), spec_(std::move(spec)), options_(options) {}

absl::StatusOr<std::unique_ptr<StreamedTfRecordSource>> StreamedTfRecordSource::Open(
    Env& env, const TfRecordSource& spec, const StreamingOptions& options) {
  if (options.block_records <= 0 || options.window_blocks <= 0 || options.cached_blocks < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "streaming needs blocks of at least one record and windows of at least one block, not ",
        options.block_records, " and ", options.window_blocks));
  }
  std::unique_ptr<StreamedTfRecordSource> source(new StreamedTfRecordSource(env, spec, options));
  const std::vector<std::string> patterns(spec.paths().begin(), spec.paths().end());
  ASSIGN_OR_RETURN(source->files_, ExpandFilePatterns(patterns));

  TfRecordIndexOptions indexing;
  indexing.block_records = options.block_records;
  indexing.save = options.save_indexes;
  bool one_id_per_field = true;
  bool integer_labels = true;
  int32_t num_classes = 0;
  std::string widths_from;  // the file the dense widths were first seen in
  int64_t records = 0;
  for (size_t f = 0; f < source->files_.size(); ++f) {
    const std::string& file = source->files_[f];
    ASSIGN_OR_RETURN(const bool gzip, IsGzippedTfRecord(env, file, spec.compression()));
    if (gzip) {
      return absl::InvalidArgumentError(absl::StrCat(
          file,
          " is gzip-compressed: streamed reading enters a file at a block, and a gzip "
          "stream can only be read from its start. Decompress it (gunzip), or read the "
          "data in memory (read_mode: READ_MODE_IN_MEMORY)"));
    }
    ASSIGN_OR_RETURN(const RecordFileIndex index,
                     LoadOrBuildTfRecordIndex(env, file, spec, indexing));
    if (index.num_records() == 0) continue;
    const std::vector<int64_t> widths(index.dense_widths().begin(), index.dense_widths().end());
    if (widths_from.empty()) {
      widths_from = file;
      indexing.dense_widths = widths;
    } else if (widths != indexing.dense_widths) {
      return absl::InvalidArgumentError(absl::StrCat(
          file, ": the dense features hold [", absl::StrJoin(widths, ", "), "] values; in ",
          widths_from, " they hold [", absl::StrJoin(indexing.dense_widths, ", "), "]"));
    }
    one_id_per_field = one_id_per_field && index.one_id_per_field();
    integer_labels = integer_labels && index.num_classes() > 0;
    num_classes = std::max(num_classes, index.num_classes());
    for (int b = 0; b < index.block_offsets_size(); ++b) {
      const int64_t first = int64_t{b} * options.block_records;
      source->places_.push_back({static_cast<int32_t>(f), index.block_offsets(b), first});
      records += std::min(options.block_records, index.num_records() - first);
      source->layout_.block_ends.push_back(records);
    }
  }
  if (records == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tfrecord: no records in ", source->files_.size(), " file(s): ", source->files_.front(),
        source->files_.size() > 1 ? ", ..." : ""));
  }
  source->layout_.window_blocks = options.window_blocks;
  source->dense_widths_ = indexing.dense_widths;
  DatasetInfo& info = source->info_;
  info.num_examples = records;
  for (int64_t width : source->dense_widths_) info.dense_dim += width;
  if (!spec.sparse_features().empty()) {
    info.sparse_dim = HashBucketsOf(spec);
    info.num_fields = one_id_per_field ? spec.sparse_features_size() : 0;
  }
  info.num_classes = integer_labels ? num_classes : 0;
  return source;
}

StreamedTfRecordSource::~StreamedTfRecordSource() {
  absl::MutexLock lock(&cache_mu_);
  if (blocks_read_ > 0) {
    LOG(INFO) << "tfrecord: read " << blocks_read_ << " blocks of the " << layout_.num_blocks()
              << " in " << files_.size() << " file(s)";
  }
}

absl::Status StreamedTfRecordSource::Read(int64_t block, Block* into) const {
  const BlockPlace& place = places_[block];
  TfRecordSpan span;
  span.offset = place.offset;
  span.first_index = place.first_index;
  span.max_records = layout_.block_ends[block] - layout_.block_begin(block);
  // Resized, not cleared: each string keeps its storage for the next block.
  into->records.resize(static_cast<size_t>(span.max_records));
  into->offsets.resize(static_cast<size_t>(span.max_records));
  absl::Status read =
      ForEachTfRecord(env_, files_[place.file], /*gzip=*/false, span,
                      [&](absl::string_view record, int64_t index, int64_t offset) -> absl::Status {
                        const size_t i = static_cast<size_t>(index - place.first_index);
                        into->records[i].assign(record.data(), record.size());
                        into->offsets[i] = offset;
                        return absl::OkStatus();
                      });
  if (!read.ok()) {
    return absl::Status(read.code(),
                        absl::StrCat(read.message(), " (the file no longer holds what its index ",
                                     RecordIndexPath(files_[place.file]), " says)"));
  }
  return absl::OkStatus();
}

std::shared_ptr<StreamedTfRecordSource::Block> StreamedTfRecordSource::FreeBlockLocked() const {
  auto reusable = std::find_if(evicted_.begin(), evicted_.end(),
                               [](const auto& block) { return block.use_count() == 1; });
  if (reusable == evicted_.end()) return std::make_shared<Block>();
  std::shared_ptr<Block> block = std::move(*reusable);
  evicted_.erase(reusable);
  return block;
}

absl::StatusOr<std::shared_ptr<const StreamedTfRecordSource::Block>>
StreamedTfRecordSource::BlockAt(int64_t block) const {
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

absl::Status StreamedTfRecordSource::Fill(absl::Span<const int64_t> indices,
                                          ExampleBatch* batch) const {
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
  if (decoder_ == nullptr) {
    decoder_ = std::make_unique<TfExampleDecoder>(spec_);
    decoder_->ExpectDenseWidths(dense_widths_);
  }
  // Parsed in the batch's order, so that row i of parsed_ is example i.
  parsed_.num_examples = 0;
  parsed_.dense_floats.clear();
  parsed_.sparse_ids.clear();
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

int64_t StreamedTfRecordSource::blocks_read() const {
  absl::MutexLock lock(&cache_mu_);
  return blocks_read_;
}

}  // namespace pstrain
