#include "common/data/batch_reader.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"

namespace pstrain {

absl::StatusOr<RecordRange> ShardRange(int64_t num_examples, int shard, int num_shards) {
  if (num_shards < 1 || shard < 0 || shard >= num_shards) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard ", shard, " of ", num_shards, " does not exist"));
  }
  const int64_t base = num_examples / num_shards;
  const int64_t extra = num_examples % num_shards;
  RecordRange range;
  range.begin = shard * base + std::min<int64_t>(shard, extra);
  range.end = range.begin + base + (shard < extra ? 1 : 0);
  return range;
}

absl::StatusOr<std::unique_ptr<BatchReader>> BatchReader::Create(
    const ExampleSource* source, const BatchReaderOptions& options) {
  if (options.batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size must be > 0, got ", options.batch_size));
  }
  if (options.epochs < 0 || options.start_epoch < 0 || options.start_offset < 0) {
    return absl::InvalidArgumentError("epochs and start_epoch must be >= 0");
  }
  if (options.prefetch_batches < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefetch_batches must be >= 0, got ", options.prefetch_batches));
  }
  BatchReaderOptions resolved = options;
  if (resolved.range.end < 0) resolved.range = {0, source->num_examples()};
  if (resolved.range.begin < 0 || resolved.range.begin > resolved.range.end ||
      resolved.range.end > source->num_examples()) {
    return absl::InvalidArgumentError(absl::StrCat("record range [", resolved.range.begin, ", ",
                                                   resolved.range.end, ") outside the ",
                                                   source->num_examples(), " records"));
  }
  if (resolved.start_offset > 0 && resolved.start_offset >= resolved.range.size()) {
    return absl::InvalidArgumentError(absl::StrCat("start_offset ", resolved.start_offset,
                                                   " outside the range's ", resolved.range.size(),
                                                   " records"));
  }
  if (source->block_layout() != nullptr && resolved.range.size() != source->num_examples()) {
    return absl::InvalidArgumentError(
        absl::StrCat("record range [", resolved.range.begin, ", ", resolved.range.end,
                     "): a source streamed from files is read whole, in its blocks' order"));
  }
  std::unique_ptr<BatchReader> reader(new BatchReader(source, resolved));
  if (resolved.prefetch_batches > 0) {
    reader->prefetch_thread_ = std::thread([r = reader.get()] { r->PrefetchLoop(); });
  }
  return reader;
}

BatchReader::BatchReader(const ExampleSource* source, const BatchReaderOptions& options)
    : source_(source),
      options_(options),
      produce_epoch_(options.start_epoch),
      produce_offset_(options.start_offset),
      consumed_in_epoch_(options.start_offset) {}

BatchReader::~BatchReader() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (prefetch_thread_.joinable()) prefetch_thread_.join();
}

void BatchReader::Recycle(ExampleBatch batch) {
  absl::MutexLock l(&mu_);
  if (static_cast<int>(spares_.size()) <= options_.prefetch_batches) {
    spares_.push_back(std::move(batch));
  }
}

absl::StatusOr<ExampleBatch> BatchReader::Produce() {
  const int64_t last_epoch =
      options_.epochs == 0 ? INT64_MAX : options_.start_epoch + options_.epochs;
  if (produce_epoch_ >= last_epoch || options_.range.size() == 0) {
    return absl::OutOfRangeError("end of data");
  }
  if (order_ == nullptr || produce_offset_ == 0) {
    const BlockLayout* layout = source_->block_layout();
    order_ = layout != nullptr
                 ? EpochOrder::Blocked(*layout, options_.shuffle, options_.seed, produce_epoch_)
                 : EpochOrder::InMemory(options_.range.size(), options_.shuffle, options_.seed,
                                        produce_epoch_);
  }
  const int64_t count = std::min<int64_t>(options_.batch_size, order_->size() - produce_offset_);
  ExampleBatch batch;
  {
    absl::MutexLock l(&mu_);
    if (!spares_.empty()) {
      batch = std::move(spares_.back());
      spares_.pop_back();
    }
  }
  positions_.resize(static_cast<size_t>(count));
  records_.resize(static_cast<size_t>(count));
  std::iota(positions_.begin(), positions_.end(), produce_offset_);
  RETURN_IF_ERROR(order_->RecordsAt(positions_, absl::MakeSpan(records_)));
  for (int64_t& record : records_) record += options_.range.begin;
  RETURN_IF_ERROR(source_->Fill(records_, &batch));
  batch.epoch = produce_epoch_;
  produce_offset_ += count;
  if (produce_offset_ == order_->size()) {
    produce_offset_ = 0;
    ++produce_epoch_;
  }
  return batch;
}

void BatchReader::PrefetchLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || static_cast<int>(queue_.size()) < options_.prefetch_batches;
      };
      mu_.Await(absl::Condition(&room));
      if (stopping_) return;
    }
    absl::StatusOr<ExampleBatch> batch = Produce();
    const bool last = !batch.ok();
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(batch));
    if (last) return;
  }
}

absl::StatusOr<ExampleBatch> BatchReader::Next() {
  if (finished_) return absl::OutOfRangeError("end of data");
  absl::StatusOr<ExampleBatch> batch;
  if (options_.prefetch_batches == 0) {
    batch = Produce();
  } else {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !queue_.empty(); };
    mu_.Await(absl::Condition(&ready));
    batch = std::move(queue_.front());
    queue_.pop_front();
  }
  if (!batch.ok()) {
    finished_ = true;
    return batch.status();
  }
  // The batch that ends an epoch is the one after which the next starts at
  // offset 0; detect it from the position within the range.
  consumed_in_epoch_ += batch->size;
  if (consumed_in_epoch_ == options_.range.size()) {
    consumed_in_epoch_ = 0;
    ++epochs_completed_;
  }
  return batch;
}

}  // namespace pstrain
