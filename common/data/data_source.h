#ifndef PSTRAIN_COMMON_DATA_DATA_SOURCE_H_
#define PSTRAIN_COMMON_DATA_DATA_SOURCE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/config/pass_mode.h"
#include "common/data/batch_reader.h"
#include "common/data/example_source.h"
#include "common/data/record_format.h"
#include "protos/job.pb.h"

namespace pstrain {

// The record format of a source that can be streamed from its files
// (tfrecord, criteo, csv, libsvm); null for the others.
std::unique_ptr<const RecordFormat> StreamableFormatOf(const DataSpec& spec);

// Opens the source a DataSpec names: streamed from its files (IsStreamed),
// loading or building their indexes, or read and validated whole.
// `mode` picks the default split (SplitOf: train or test) of sources that
// have one. Errors of the reader (NotFound, InvalidArgument naming the file
// and the place), or InvalidArgument when no source is set.
absl::StatusOr<std::unique_ptr<ExampleSource>> OpenExampleSource(const DataSpec& spec,
                                                                 PassMode mode);

// Whether the spec's records are streamed from files (its read_mode, AUTO
// decided by the files' sizes and compression) rather than held in memory.
// Errors: the files' (NotFound: a pattern that matches no file).
absl::StatusOr<bool> IsStreamed(const DataSpec& spec);

// Batch reader options from a DataSpec: batch size, shuffling (default: on
// for training data, off for evaluation data), seed, epochs and prefetch,
// with the documented defaults for unset fields. The range is the whole
// source; callers that shard set it.
BatchReaderOptions BatchReaderOptionsFromSpec(const DataSpec& spec, PassMode mode);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_DATA_SOURCE_H_
