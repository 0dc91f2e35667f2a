#ifndef PSTRAIN_COMMON_DATA_BATCH_READER_H_
#define PSTRAIN_COMMON_DATA_BATCH_READER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/data/epoch_order.h"
#include "common/data/example_batch.h"
#include "common/data/example_source.h"

namespace pstrain {

// A half-open range [begin, end) of record indices: one reader's share.
struct RecordRange {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// Shard `shard` of `num_shards` contiguous, nearly equal ranges covering
// [0, num_examples): the first num_examples % num_shards shards get one
// record more. InvalidArgument: num_shards < 1 or shard outside
// [0, num_shards).
absl::StatusOr<RecordRange> ShardRange(int64_t num_examples, int shard, int num_shards);

struct BatchReaderOptions {
  // Examples per batch; > 0. The last batch of an epoch may be smaller.
  int64_t batch_size = 128;
  // The records to read. Default (end < 0): all of them.
  RecordRange range = {0, -1};
  // Reshuffle the range at the start of each epoch (EpochOrder; a source
  // streamed by blocks is read in its blocks' order and only whole). The
  // order of epoch e depends only on (seed, e), so a reader restarted at
  // start_epoch repeats the same order. Default false.
  bool shuffle = false;
  uint64_t seed = 0;
  // Passes over the range; 0 repeats until the reader is destroyed.
  int64_t epochs = 1;
  // Where to start (to resume after a restart without skipping or repeating
  // data): the epoch, and how many records of that epoch's order were
  // already read. Default 0, 0.
  int64_t start_epoch = 0;
  int64_t start_offset = 0;
  // Batches assembled ahead on a background thread. 0 reads on the caller's
  // thread. Default 2: enough to hide the copy behind one training step.
  int prefetch_batches = 2;
};

// Reads batches from an ExampleSource in epochs, optionally shuffled and
// prefetched. Next() is for one consumer thread; the prefetch thread is
// joined on destruction. Borrows `source`, which must outlive it.
class BatchReader {
 public:
  // InvalidArgument: batch_size < 1, epochs < 0, prefetch_batches < 0, a
  // range outside the source's records, or a start_offset outside
  // [0, range size).
  static absl::StatusOr<std::unique_ptr<BatchReader>> Create(const ExampleSource* source,
                                                             const BatchReaderOptions& options);
  ~BatchReader();

  BatchReader(const BatchReader&) = delete;
  BatchReader& operator=(const BatchReader&) = delete;

  // The next batch. OutOfRange once every epoch has been read (and on every
  // later call); the source's error if reading fails.
  absl::StatusOr<ExampleBatch> Next();

  // Hands back a batch Next() returned, once its consumer is done with it:
  // a later batch is filled into its storage (tensors of the same shape are
  // refilled in place) instead of into fresh memory. Optional, but a batch
  // of 1000 images is 3 MB of floats, and fresh memory is faulted in page
  // by page and cold in cache. At most prefetch_batches + 1 are kept.
  void Recycle(ExampleBatch batch);

  // Epochs whose every batch Next() has returned.
  int64_t epochs_completed() const { return epochs_completed_; }

  // The position after the last batch Next() returned, to resume from:
  // (epoch, records of that epoch already read).
  int64_t position_epoch() const { return options_.start_epoch + epochs_completed_; }
  int64_t position_offset() const { return consumed_in_epoch_; }

 private:
  BatchReader(const ExampleSource* source, const BatchReaderOptions& options);

  // Assembles the batch at the producer's position and advances it.
  absl::StatusOr<ExampleBatch> Produce();
  void PrefetchLoop();

  const ExampleSource* const source_;
  const BatchReaderOptions options_;

  // Producer state: touched only by the thread that produces (the prefetch
  // thread, or the caller when prefetch_batches is 0).
  int64_t produce_epoch_;
  int64_t produce_offset_;
  std::unique_ptr<EpochOrder> order_;         // the current epoch's (of the range)
  std::vector<int64_t> positions_, records_;  // of the batch being produced

  // Consumer state.
  int64_t epochs_completed_ = 0;
  int64_t consumed_in_epoch_ = 0;
  bool finished_ = false;

  absl::Mutex mu_;
  std::deque<absl::StatusOr<ExampleBatch>> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<ExampleBatch> spares_ ABSL_GUARDED_BY(mu_);  // from Recycle
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  std::thread prefetch_thread_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_BATCH_READER_H_
