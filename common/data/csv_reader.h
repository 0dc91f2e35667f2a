#ifndef PSTRAIN_COMMON_DATA_CSV_READER_H_
#define PSTRAIN_COMMON_DATA_CSV_READER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/in_memory_source.h"
#include "common/data/record_format.h"
#include "protos/job.pb.h"

namespace pstrain {

// Decodes CSV lines one at a time. Not thread-safe.
class CsvLineDecoder {
 public:
  // `options` valid (one-character delimiter, label_column >= 0). `columns`:
  // the columns every line has; -1: as many as the first line.
  explicit CsvLineDecoder(const CsvSource& options, int64_t columns = -1);
  // Appends the example of `line` (without its line break) to *examples
  // and sets its dense_dim. On error *examples is unchanged.
  // InvalidArgument saying what is wrong, for the caller to prefix with the
  // file and line: a field that is not a finite number, another number of
  // columns, a label column beyond the first line's last.
  absl::Status Append(absl::string_view line, InMemorySource::Examples* examples);
  // The columns of every line; -1 before the first.
  int64_t columns() const { return columns_; }

 private:
  const char delimiter_;
  const int64_t label_column_;
  int64_t columns_;
  std::vector<float> row_;  // reused from line to line
};

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

// Reads the files options.path and options.paths name (each gzipped or
// not; a header in each when has_header) and parses them as one data set,
// every line with the first's columns. NotFound: a path or pattern that
// matches no file.
absl::StatusOr<std::unique_ptr<InMemorySource>> LoadCsv(const CsvSource& options);

// The lines of the files `options` names as records, for streaming them.
// `options` must have passed job-spec validation.
std::unique_ptr<const RecordFormat> CsvRecordFormat(const CsvSource& options);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_CSV_READER_H_
