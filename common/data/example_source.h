#ifndef PSTRAIN_COMMON_DATA_EXAMPLE_SOURCE_H_
#define PSTRAIN_COMMON_DATA_EXAMPLE_SOURCE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "common/data/block_layout.h"
#include "common/data/dataset_info.h"
#include "common/data/example_batch.h"

namespace pstrain {

// A data set with access by record index in [0, num_examples()). Opening
// one validates all of it (or its index), so Fill fails only on bad indices
// or, for a source streamed from files, when reading a file fails.
// Immutable once opened: concurrent Fill calls are safe.
class ExampleSource {
 public:
  virtual ~ExampleSource() = default;

  virtual const DatasetInfo& info() const = 0;
  int64_t num_examples() const { return info().num_examples; }

  // For a source streamed from files, the blocks it reads them in: an epoch
  // is then read in EpochOrder::Blocked's order, since at random a record
  // would cost a block's read. nullptr: every record is in memory.
  virtual const BlockLayout* block_layout() const { return nullptr; }

  // Replaces *batch with the examples at `indices`, in that order, reusing
  // its storage where the shapes allow.
  // OutOfRange: an index outside [0, num_examples()). A streamed source's
  // reading errors.
  virtual absl::Status Fill(absl::Span<const int64_t> indices, ExampleBatch* batch) const = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_EXAMPLE_SOURCE_H_
