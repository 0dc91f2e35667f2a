#include "worker/training_data.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/data/batch_reader.h"
#include "common/data/data_source.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace worker {

TrainingDataOptions TrainingDataOptionsFromSpec(const DataSpec& spec) {
  const BatchReaderOptions reader = BatchReaderOptionsFromSpec(spec, PassMode::kTrain);
  TrainingDataOptions options;
  options.batch_size = reader.batch_size;
  options.shuffle = reader.shuffle;
  options.seed = reader.seed;
  options.prefetch_batches = reader.prefetch_batches;
  return options;
}

absl::StatusOr<std::unique_ptr<ExampleSource>> OpenTrainingData(const DataSpec& spec) {
  return OpenExampleSource(spec, PassMode::kTrain);
}

EpochOrders::EpochOrders(const ExampleSource* source, bool shuffle, uint64_t seed)
    : source_(source), shuffle_(shuffle), seed_(seed) {}

std::shared_ptr<const EpochOrder> EpochOrders::Order(int64_t epoch) {
  auto found = cache_.find(epoch);
  if (found != cache_.end()) return found->second;
  const BlockLayout* layout = source_->block_layout();
  std::shared_ptr<const EpochOrder> order =
      layout != nullptr ? EpochOrder::Blocked(*layout, shuffle_, seed_, epoch)
                        : EpochOrder::InMemory(source_->num_examples(), shuffle_, seed_, epoch);
  cache_[epoch] = order;
  while (cache_.size() > 2) cache_.erase(cache_.begin());
  return order;
}

// The records of an epoch in its order: index p is the record at position p.
class LeaseBatchReader::PermutedSource : public ExampleSource {
 public:
  PermutedSource(const ExampleSource* source, std::shared_ptr<const EpochOrder> order)
      : source_(source), order_(std::move(order)) {}

  const DatasetInfo& info() const override { return source_->info(); }

  absl::Status Fill(absl::Span<const int64_t> indices, ExampleBatch* batch) const override {
    std::vector<int64_t> records(indices.size());
    RETURN_IF_ERROR(order_->RecordsAt(indices, absl::MakeSpan(records)));
    return source_->Fill(records, batch);
  }

 private:
  const ExampleSource* const source_;
  const std::shared_ptr<const EpochOrder> order_;
};

absl::StatusOr<std::unique_ptr<LeaseBatchReader>> LeaseBatchReader::Create(
    const ExampleSource* source, std::shared_ptr<const EpochOrder> order, int64_t begin,
    int64_t end, const TrainingDataOptions& options) {
  if (begin < 0 || end <= begin || end > order->size()) {
    return absl::InvalidArgumentError(absl::StrCat("lease range [", begin, ", ", end,
                                                   ") is not within the ", order->size(),
                                                   " records of the training data"));
  }
  std::unique_ptr<LeaseBatchReader> reader(
      new LeaseBatchReader(std::make_unique<PermutedSource>(source, std::move(order)), begin, end));
  BatchReaderOptions batches;
  batches.batch_size = options.batch_size;
  batches.range = {begin, end};
  batches.shuffle = false;  // the epoch's order is already shuffled
  batches.epochs = 1;
  batches.prefetch_batches = options.prefetch_batches;
  ASSIGN_OR_RETURN(reader->reader_, BatchReader::Create(reader->source_.get(), batches));
  return reader;
}

LeaseBatchReader::LeaseBatchReader(std::unique_ptr<PermutedSource> source, int64_t begin,
                                   int64_t end)
    : source_(std::move(source)), next_(begin), end_(end) {}

LeaseBatchReader::~LeaseBatchReader() {
  reader_.reset();  // joins the prefetch thread before the source goes
}

absl::StatusOr<LeaseBatch> LeaseBatchReader::Next() {
  ASSIGN_OR_RETURN(ExampleBatch batch, reader_->Next());
  LeaseBatch out;
  out.begin = next_;
  out.end = next_ + batch.size;
  out.batch = std::move(batch);
  next_ = out.end;
  return out;
}

void LeaseBatchReader::Recycle(ExampleBatch batch) { reader_->Recycle(std::move(batch)); }

}  // namespace worker
}  // namespace pstrain
