#ifndef PSTRAIN_COMMON_DATA_STREAMED_SOURCE_H_
#define PSTRAIN_COMMON_DATA_STREAMED_SOURCE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "common/checkpoint/env.h"
#include "common/data/block_layout.h"
#include "common/data/example_source.h"
#include "common/data/in_memory_source.h"
#include "common/data/record_format.h"
#include "protos/data_index.pb.h"

namespace pstrain {

struct StreamingOptions {
  // Records per block, the unit read from a file at once; > 0.
  int64_t block_records = 1024;
  // Blocks whose records a shuffled epoch mixes (BlockLayout); > 0.
  int32_t window_blocks = 8;
  // Blocks kept in memory. A reader of a shuffled epoch holds one window's;
  // a worker reads the window of its next lease while it trains on the
  // current one (its lease ahead, worker_loop.cc). Default (0):
  // 2 * window_blocks + 1.
  int32_t cached_blocks = 0;
  // Save the indexes built at open beside the files (record_index.h).
  bool save_indexes = true;
};

// The records of files (TFRecord, lines of text; plain or gzipped), read a
// block at a time as they are asked for, through the files' offset
// indexes: memory holds the indexes (8 bytes per block, and a gzipped
// file's access points, about 40 more) and a few blocks of records as
// stored, not the data set. A block is read with one read (from a gzipped
// file, inflated from the access point before it: one deflate block more
// at most) and split into its records in place (TFRecord framing and CRCs
// checked, or lines); its records are decoded only when a batch takes
// them: the first batch of a shuffled window takes records of
// every block of it, and decoding whole blocks then made it wait for all
// of them (18 ms for 8 blocks of images, at the start of every lease).
// Blocks are read outside the lock that decoding takes, so a reader
// starting on the next window does not hold up one that is gathering
// batches from the current window; two readers of one block share one
// read. Opening loads or builds each file's index (record_index.h); the
// summaries in the indexes give info() without reading the records again.
// Thread-safe.
class StreamedSource : public ExampleSource {
 public:
  // The files `format` names. `env` must outlive the source.
  // NotFound: a path or pattern that matches no file. InvalidArgument:
  // files whose dense features differ in width, no records at all, bad
  // options. The index builds' errors.
  static absl::StatusOr<std::unique_ptr<StreamedSource>> Open(
      Env& env, std::unique_ptr<const RecordFormat> format, const StreamingOptions& options);

  // Logs how many blocks were read: more than an epoch's blocks per epoch
  // means leases that split windows.
  ~StreamedSource() override;

  const DatasetInfo& info() const override { return info_; }
  const BlockLayout* block_layout() const override { return &layout_; }

  // Reads the blocks that hold `indices` unless cached. OutOfRange: an
  // index outside the records. DataLoss or InvalidArgument naming the file
  // and record: the file no longer holds what its index says.
  absl::Status Fill(absl::Span<const int64_t> indices, ExampleBatch* batch) const override;

  const RecordFormat& format() const { return *format_; }

  // Blocks read since open (a block read twice counts twice).
  int64_t blocks_read() const;

 private:
  // A gzipped file's access points, and their windows when they are not in
  // the file beside it (GzipWindowsPath).
  struct GzipAccess {
    std::vector<GzipAccessPoint> points;
    std::string windows;
  };
  // Where block b of the layout is: bytes [offset, end) of a file's stream.
  struct BlockPlace {
    int32_t file = 0;
    int64_t offset = 0;       // of its first record
    int64_t end = 0;          // of its last record
    int64_t first_index = 0;  // of its first record in the file
  };
  // A block's bytes as stored, and its records (views of them, their
  // framing checked) and where each was.
  // `index` and `state` are guarded by cache_mu_; the thread that set
  // kReading writes the records without it, and others read them once they
  // see kReady.
  struct Block {
    enum class State { kReading, kReady, kFailed };
    int64_t index = -1;
    State state = State::kReading;
    absl::Status failure;  // of kFailed
    std::string bytes;
    std::vector<absl::string_view> records;
    std::vector<int64_t> offsets;
  };

  StreamedSource(Env& env, std::unique_ptr<const RecordFormat> format, StreamingOptions options);
  // The block, from the cache, waited for while another thread reads it,
  // or read (outside cache_mu_).
  absl::StatusOr<std::shared_ptr<const Block>> BlockAt(int64_t block) const
      ABSL_LOCKS_EXCLUDED(cache_mu_);
  // A block's storage to read into: an evicted one no batch holds, or new.
  std::shared_ptr<Block> FreeBlockLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(cache_mu_);
  // Reads bytes [offset, offset + into->size()) of file `file_index`'s
  // records' stream into *into.
  absl::Status ReadStreamAt(int32_t file_index, int64_t offset, std::string* into) const;
  // Reads block `block` into *into, whose storage it reuses.
  absl::Status Read(int64_t block, Block* into) const;

  Env& env_;
  const std::unique_ptr<const RecordFormat> format_;
  const StreamingOptions options_;
  std::vector<std::string> files_;
  std::vector<GzipAccess> gzip_;  // per file; no points: not gzipped
  std::vector<BlockPlace> places_;
  // The files' summaries, merged.
  RecordSummary summary_;
  BlockLayout layout_;
  DatasetInfo info_;

  mutable absl::Mutex cache_mu_;
  // Most recently used first; blocks being read included.
  mutable std::list<std::shared_ptr<Block>> cache_ ABSL_GUARDED_BY(cache_mu_);
  // Blocks evicted from the cache, whose storage later reads fill again
  // once no batch being gathered holds them (use_count 1). pstrain
  // processes keep the memory they free (allocator_tuning.h), in glibc's
  // per-thread arenas: a fresh block on each lease's prefetch thread left a
  // Fashion-MNIST worker at 237 MB RSS where 58 MB were live.
  mutable std::vector<std::shared_ptr<Block>> evicted_ ABSL_GUARDED_BY(cache_mu_);
  mutable int64_t blocks_read_ ABSL_GUARDED_BY(cache_mu_) = 0;

  // Decoding and gathering a batch, once its blocks are in hand.
  mutable absl::Mutex parse_mu_;
  mutable std::unique_ptr<RecordDecoder> decoder_ ABSL_GUARDED_BY(parse_mu_);
  // The examples of the batch being gathered, parsed in its order.
  mutable InMemorySource::Examples parsed_ ABSL_GUARDED_BY(parse_mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_STREAMED_SOURCE_H_
