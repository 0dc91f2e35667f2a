#ifndef PSTRAIN_COMMON_DATA_EXAMPLE_SOURCE_H_
#define PSTRAIN_COMMON_DATA_EXAMPLE_SOURCE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "common/data/dataset_info.h"
#include "common/data/example_batch.h"

namespace pstrain {

// A data set with random access by record index in [0, num_examples()).
// Opening one validates all of it, so Fill fails only on bad indices.
// Immutable once opened: concurrent Fill calls are safe.
class ExampleSource {
 public:
  virtual ~ExampleSource() = default;

  virtual const DatasetInfo& info() const = 0;
  int64_t num_examples() const { return info().num_examples; }

  // Replaces *batch with the examples at `indices`, in that order, reusing
  // its storage where the shapes allow.
  // OutOfRange: an index outside [0, num_examples()).
  virtual absl::Status Fill(absl::Span<const int64_t> indices, ExampleBatch* batch) const = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_EXAMPLE_SOURCE_H_
