#include "common/data/csv_reader.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/data/file_contents.h"
#include "common/data/file_patterns.h"
#include "common/data/line_record_format.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::Status Malformed(absl::string_view file, int64_t line, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", reason));
}

char DelimiterOf(const CsvSource& options) {
  return options.delimiter().empty() ? ',' : options.delimiter()[0];
}

class CsvRecordDecoder : public RecordDecoder {
 public:
  CsvRecordDecoder(const CsvSource& options, const RecordSummary* expected)
      : decoder_(options, expected == nullptr || expected->dense_widths.empty()
                              ? -1
                              : expected->dense_widths[0] + 1) {}
  absl::Status Append(absl::string_view record, InMemorySource::Examples* examples) override {
    return decoder_.Append(record, examples);
  }
  std::vector<int64_t> dense_widths() const override {
    if (decoder_.columns() < 0) return {};
    return {decoder_.columns() - 1};
  }
  bool one_id_per_field() const override { return false; }

 private:
  CsvLineDecoder decoder_;
};

class CsvFormat : public LineRecordFormat {
 public:
  explicit CsvFormat(CsvSource options) : options_(std::move(options)) {}

  absl::string_view name() const override { return "csv"; }
  std::vector<std::string> patterns() const override { return PathAndPatternsOf(options_); }
  std::string DecodingKey() const override {
    CsvSource decoding = options_;
    decoding.clear_path();
    decoding.clear_paths();
    return absl::StrCat("csv ", decoding.ShortDebugString());
  }
  std::unique_ptr<RecordDecoder> NewDecoder(const RecordSummary* expected) const override {
    return std::make_unique<CsvRecordDecoder>(options_, expected);
  }
  void Describe(const RecordSummary& summary, DatasetInfo* info) const override {
    info->num_classes = summary.num_classes;
  }

 protected:
  bool has_header() const override { return options_.has_header(); }

 private:
  const CsvSource options_;
};

}  // namespace

CsvLineDecoder::CsvLineDecoder(const CsvSource& options, int64_t columns)
    : delimiter_(DelimiterOf(options)), label_column_(options.label_column()), columns_(columns) {}

absl::Status CsvLineDecoder::Append(absl::string_view line, InMemorySource::Examples* examples) {
  row_.clear();
  for (absl::string_view field : absl::StrSplit(line, delimiter_)) {
    float value;
    if (!absl::SimpleAtof(field, &value) || !std::isfinite(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("column ", row_.size() + 1, ": \"", field, "\" is not a number"));
    }
    row_.push_back(value);
  }
  const int64_t columns = static_cast<int64_t>(row_.size());
  if (columns_ < 0) {
    if (label_column_ >= columns) {
      return absl::InvalidArgumentError(absl::StrCat(
          "label_column ", label_column_, " is beyond the last column (", columns, " columns)"));
    }
    columns_ = columns;
  } else if (columns != columns_) {
    return absl::InvalidArgumentError(
        absl::StrCat(columns, " columns, the first line had ", columns_));
  }
  examples->dense_dim = columns_ - 1;
  for (int64_t c = 0; c < columns_; ++c) {
    if (c == label_column_) {
      examples->labels.push_back(row_[c]);
    } else {
      examples->dense_floats.push_back(row_[c]);
    }
  }
  ++examples->num_examples;
  return absl::OkStatus();
}

namespace {

// InvalidArgument naming `file`: a delimiter of other than one character, a
// negative label column.
absl::Status CheckCsvOptions(const CsvSource& options, absl::string_view file) {
  const std::string delimiter = options.delimiter().empty() ? "," : options.delimiter();
  if (delimiter.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": the delimiter must be one character, got \"", delimiter, "\""));
  }
  if (options.label_column() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": label_column must be >= 0"));
  }
  return absl::OkStatus();
}

// Appends the examples of `text`, the contents of `file`, to *examples
// through `decoder` (which keeps the column count from file to file).
absl::Status AppendCsv(absl::string_view text, const CsvSource& options, absl::string_view file,
                       CsvLineDecoder* decoder, InMemorySource::Examples* examples) {
  int64_t line_number = 0;
  bool header_pending = options.has_header();
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (header_pending) {
      header_pending = false;
      continue;
    }
    const absl::Status appended = decoder->Append(line, examples);
    if (!appended.ok()) return Malformed(file, line_number, appended.message());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<InMemorySource>> ParseCsv(absl::string_view text,
                                                         const CsvSource& options,
                                                         absl::string_view file) {
  RETURN_IF_ERROR(CheckCsvOptions(options, file));
  InMemorySource::Examples examples;
  CsvLineDecoder decoder(options);
  RETURN_IF_ERROR(AppendCsv(text, options, file, &decoder, &examples));
  if (examples.num_examples == 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": no examples"));
  }
  return InMemorySource::Create(std::move(examples));
}

absl::StatusOr<std::unique_ptr<InMemorySource>> LoadCsv(const CsvSource& options) {
  const std::vector<std::string> patterns = PathAndPatternsOf(options);
  if (patterns.empty()) return absl::InvalidArgumentError("csv.path is required");
  ASSIGN_OR_RETURN(const std::vector<std::string> files, ExpandFilePatterns(patterns));
  RETURN_IF_ERROR(CheckCsvOptions(options, files.front()));
  InMemorySource::Examples examples;
  CsvLineDecoder decoder(options);
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(const ByteBuffer text, ReadFileContents(file));
    RETURN_IF_ERROR(AppendCsv(text.view(), options, file, &decoder, &examples));
  }
  if (examples.num_examples == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(files.front(), files.size() > 1 ? ", ..." : "", ": no examples"));
  }
  return InMemorySource::Create(std::move(examples));
}

std::unique_ptr<const RecordFormat> CsvRecordFormat(const CsvSource& options) {
  return std::make_unique<CsvFormat>(options);
}

}  // namespace pstrain
