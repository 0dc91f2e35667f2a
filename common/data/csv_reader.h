#ifndef PSTRAIN_COMMON_DATA_CSV_READER_H_
#define PSTRAIN_COMMON_DATA_CSV_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/data/csv_columns.h"
#include "common/data/in_memory_source.h"
#include "common/data/record_format.h"
#include "protos/job.pb.h"

namespace pstrain {

// Decodes CSV lines one at a time. Not thread-safe.
class CsvLineDecoder {
 public:
  // `options` valid (one-character delimiter, label_column >= 0).
  explicit CsvLineDecoder(const CsvSource& options);
  // The file's header line, before its first record. When the options name
  // columns, it names them, and every file's must be the first's;
  // otherwise it is skipped. InvalidArgument: a name the options give that
  // the header lacks (ResolveCsvColumns), or a header unlike the first
  // file's.
  absl::Status SetHeader(absl::string_view line);
  // Appends the example of `line` (without its line break) to *examples
  // and sets its dense_dim (and its ids' fields). On error *examples is
  // unchanged. InvalidArgument saying what is wrong, for the caller to
  // prefix with the file and line: a feature or label that is not a finite
  // number, a missing one without a fill, another number of columns than
  // the first line's.
  absl::Status Append(absl::string_view line, InMemorySource::Examples* examples);
  // The dense features of every line; -1 before the first line or header.
  int64_t num_features() const { return columns_ ? columns_->num_features : -1; }
  // DenseNamesOf and DenseFillOf the columns; empty before the first line
  // or header.
  std::vector<std::string> dense_names() const;
  std::vector<float> dense_fill() const;

 private:
  absl::Status Resolve(const std::vector<absl::string_view>& header, int64_t num_columns);

  const CsvSource options_;
  const char delimiter_;
  std::optional<CsvColumns> columns_;
  std::string header_;                     // the first file's header line, as read
  std::vector<absl::string_view> fields_;  // reused from line to line
  std::vector<float> features_;
  std::vector<int64_t> ids_;
};

// Parses CSV text: one example per line, its columns taken as `options`
// says (ResolveCsvColumns): the label, the dense features (missing ones
// filled or refused), categorical columns as sparse ids. With has_header
// the first line names the columns; blank lines are ignored; a trailing
// '\r' is dropped. `file` names the input in errors. InvalidArgument, as
// "<file>:<line>: <reason>": a field that is not a number (naming its
// column and a prefix of its text), a missing field without a fill, a line
// with another number of columns than the first, a name the header lacks,
// a delimiter that is not one character, or no examples at all.
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
