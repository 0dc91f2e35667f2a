#ifndef PSTRAIN_COMMON_DATA_CSV_READER_H_
#define PSTRAIN_COMMON_DATA_CSV_READER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/in_memory_source.h"
#include "protos/job.pb.h"

namespace pstrain {

// Parses CSV text: one example per line, every field a finite number, the
// label in column `options.label_column` and the other columns the dense
// features in order. An optional header line is skipped; blank lines are
// ignored; a trailing '\r' is dropped. `file` names the input in errors.
// InvalidArgument, as "<file>:<line>: <reason>": a field that is not a
// number (naming its column and text), a line with another number of
// columns than the first, a label column beyond the last column, a
// delimiter that is not one character, or no examples at all.
absl::StatusOr<std::unique_ptr<InMemorySource>> ParseCsv(absl::string_view text,
                                                         const CsvSource& options,
                                                         absl::string_view file);

// Reads options.path (gzipped or not) and parses it. NotFound: no file.
absl::StatusOr<std::unique_ptr<InMemorySource>> LoadCsv(const CsvSource& options);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_CSV_READER_H_
