#ifndef PSTRAIN_WORKER_TRAINING_DATA_H_
#define PSTRAIN_WORKER_TRAINING_DATA_H_

// The worker's view of a job's training data: records are read in leases,
// a lease names positions [begin, end) in its epoch's order (the same
// shuffled order on every worker, so the leases of an epoch cover every
// record once), and each batch says which positions it holds, so that the
// records of a refused push can be handed back.
//
// Kept apart from the trainer loop: common/data's batch reader declares a
// struct RecordRange that collides with the RecordRange message of
// protos/checkpoint.proto, so no file includes both.

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/epoch_order.h"
#include "common/data/example_batch.h"
#include "common/data/example_source.h"
#include "protos/job.pb.h"

namespace pstrain {

class BatchReader;

namespace worker {

// How a job reads its training data, from its DataSpec with defaults.
struct TrainingDataOptions {
  int64_t batch_size = 128;
  bool shuffle = true;
  uint64_t seed = 0;
  int prefetch_batches = 2;
};

TrainingDataOptions TrainingDataOptionsFromSpec(const DataSpec& spec);

// Opens (and validates) the training data a spec names. The data readers'
// errors: NotFound, InvalidArgument naming the file and the place.
absl::StatusOr<std::unique_ptr<ExampleSource>> OpenTrainingData(const DataSpec& spec);

// The order of each epoch's records (EpochOrder: shuffled in memory, or by
// blocks for a source streamed from files), the same on every worker.
// Keeps the two newest epochs (leases of two epochs overlap at an epoch
// boundary). Thread-compatible. Borrows `source`.
class EpochOrders {
 public:
  EpochOrders(const ExampleSource* source, bool shuffle, uint64_t seed);

  std::shared_ptr<const EpochOrder> Order(int64_t epoch);

 private:
  const ExampleSource* const source_;
  const bool shuffle_;
  const uint64_t seed_;
  std::map<int64_t, std::shared_ptr<const EpochOrder>> cache_;
};

// One batch of a lease and the positions [begin, end) of the epoch it holds.
struct LeaseBatch {
  ExampleBatch batch;
  int64_t begin = 0;
  int64_t end = 0;
};

// Reads positions [begin, end) of one epoch's order as batches, in order,
// assembling the next ones on a background thread while the caller
// computes. Next() is for one thread. Borrows `source`.
class LeaseBatchReader {
 public:
  // InvalidArgument: an empty or reversed range, or one outside the order.
  static absl::StatusOr<std::unique_ptr<LeaseBatchReader>> Create(
      const ExampleSource* source, std::shared_ptr<const EpochOrder> order, int64_t begin,
      int64_t end, const TrainingDataOptions& options);
  ~LeaseBatchReader();

  LeaseBatchReader(const LeaseBatchReader&) = delete;
  LeaseBatchReader& operator=(const LeaseBatchReader&) = delete;

  // The next batch; OutOfRange after the last.
  absl::StatusOr<LeaseBatch> Next();

  // Hands back a batch's examples once computed on (see
  // BatchReader::Recycle): the next batches are filled into its storage.
  void Recycle(ExampleBatch batch);

  // The first position not yet returned by Next().
  int64_t next_position() const { return next_; }
  int64_t end() const { return end_; }

 private:
  class PermutedSource;
  LeaseBatchReader(std::unique_ptr<PermutedSource> source, int64_t begin, int64_t end);

  std::unique_ptr<PermutedSource> source_;
  std::unique_ptr<BatchReader> reader_;
  int64_t next_;
  const int64_t end_;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_TRAINING_DATA_H_
