#include "common/data/csv_reader.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/checkpoint/posix_env.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/categorical_id.h"
#include "common/data/field_text.h"
#include "common/data/file_contents.h"
#include "common/data/file_patterns.h"
#include "common/data/gzip_file.h"
#include "common/data/line_record_format.h"
#include "common/data/standardization.h"
#include "common/data/text_lines.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::Status Malformed(absl::string_view file, int64_t line, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", reason));
}

char DelimiterOf(const CsvSource& options) {
  return options.delimiter().empty() ? ',' : options.delimiter()[0];
}

// The fields of `line`, reusing *fields.
void SplitFields(absl::string_view line, char delimiter, std::vector<absl::string_view>* fields) {
  fields->clear();
  for (absl::string_view field : absl::StrSplit(line, delimiter)) fields->push_back(field);
}

// The first line of `path` (gzipped or not) that holds something, without
// its line break: the header, as the line readers skip blank lines before
// it. "" for a file of blank lines.
absl::StatusOr<std::string> ReadHeaderLine(const std::string& path) {
  PosixEnv env;
  ASSIGN_OR_RETURN(const bool gzipped, IsGzipFile(env, path));
  ASSIGN_OR_RETURN(std::unique_ptr<SequentialFile> file, OpenSequentialFile(env, path, gzipped));
  std::string text;
  std::string chunk(4096, '\0');
  size_t start = 0;  // of the first line not looked at yet
  while (true) {
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      absl::string_view line(text.data() + start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (!line.empty()) return std::string(line);
    }
    if (static_cast<int64_t>(text.size() - start) > kMaxLineBytes) return LineTooLong(path, 1);
    ASSIGN_OR_RETURN(absl::string_view read, file->Read(chunk.size(), chunk.data()));
    if (read.empty()) break;
    text.append(read.data(), read.size());
  }
  absl::string_view last(text.data() + start, text.size() - start);
  if (!last.empty() && last.back() == '\r') last.remove_suffix(1);
  return std::string(last);
}

class CsvRecordDecoder : public RecordDecoder {
 public:
  // `header`: the first file's header line, or its error; none when the
  // options name no column (the header is then only skipped).
  CsvRecordDecoder(const CsvSource& options, const absl::StatusOr<std::string>* header)
      : decoder_(options), ready_(header == nullptr ? absl::OkStatus() : header->status()) {
    if (header != nullptr && ready_.ok()) ready_ = decoder_.SetHeader(**header);
  }
  absl::Status Append(absl::string_view record, InMemorySource::Examples* examples) override {
    if (!ready_.ok()) return ready_;
    return decoder_.Append(record, examples);
  }
  std::vector<int64_t> dense_widths() const override {
    if (decoder_.num_features() < 0) return {};
    return std::vector<int64_t>(decoder_.num_features(), 1);
  }
  bool one_id_per_field() const override { return true; }

 private:
  CsvLineDecoder decoder_;
  absl::Status ready_;
};

class CsvFormat : public LineRecordFormat {
 public:
  explicit CsvFormat(CsvSource options)
      : options_(std::move(options)), names_columns_(NamesCsvColumns(options_)) {}

  absl::string_view name() const override { return "csv"; }
  std::vector<std::string> patterns() const override { return PathAndPatternsOf(options_); }
  std::string DecodingKey() const override {
    CsvSource decoding = options_;
    decoding.clear_path();
    decoding.clear_paths();
    return absl::StrCat("csv ", decoding.ShortDebugString());
  }
  std::unique_ptr<RecordDecoder> NewDecoder(const RecordSummary*) const override {
    return std::make_unique<CsvRecordDecoder>(options_, names_columns_ ? &Header() : nullptr);
  }
  void Describe(const RecordSummary& summary, DatasetInfo* info) const override {
    // The columns as the decoders took them; read before any record was.
    CsvLineDecoder columns(options_);
    if (names_columns_ && Header().ok() && columns.SetHeader(*Header()).ok()) {
      info->dense_names = columns.dense_names();
      info->dense_fill = columns.dense_fill();
    }
    if (!options_.categorical().empty()) {
      info->sparse_dim = HashBucketsOf(options_);
      info->num_fields = options_.categorical_size();
    }
    info->num_classes = summary.num_classes;
  }

 protected:
  bool has_header() const override { return options_.has_header(); }

 private:
  // The first file's header, which names the columns for every file (a
  // block read from the middle of a file does not see its file's). Read
  // once, when a decoder first needs it: a format made only to ask for its
  // files or their compression reads no data.
  const absl::StatusOr<std::string>& Header() const {
    absl::call_once(header_once_, [this] {
      absl::StatusOr<std::vector<std::string>> files =
          ExpandFilePatterns(PathAndPatternsOf(options_));
      header_ = files.ok() ? ReadHeaderLine(files->front()) : files.status();
    });
    return header_;
  }

  const CsvSource options_;
  // Only a spec that names columns reads the header; others skip it.
  const bool names_columns_;
  mutable absl::once_flag header_once_;
  mutable absl::StatusOr<std::string> header_;
};

// "column 3", or "column 3 (\"price\")" when the header names it.
std::string ColumnText(const CsvColumns::Column& column, int64_t index) {
  if (column.name.empty()) return absl::StrCat("column ", index + 1);
  return absl::StrCat("column ", index + 1, " (", QuotedField(column.name), ")");
}

// Parses `field` of the column `index` as a finite number into *value.
// false: missing. InvalidArgument: not a number.
absl::StatusOr<bool> ParseNumber(absl::string_view field, const CsvColumns::Column& column,
                                 int64_t index, float* value) {
  if (IsMissingField(field)) return false;
  if (!absl::SimpleAtof(field, value) || !std::isfinite(*value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ColumnText(column, index), ": ", QuotedField(field), " is not a number"));
  }
  return true;
}

}  // namespace

CsvLineDecoder::CsvLineDecoder(const CsvSource& options)
    : options_(options), delimiter_(DelimiterOf(options)) {}

absl::Status CsvLineDecoder::Resolve(const std::vector<absl::string_view>& header,
                                     int64_t num_columns) {
  ASSIGN_OR_RETURN(CsvColumns columns, ResolveCsvColumns(options_, header, num_columns));
  columns_ = std::move(columns);
  return absl::OkStatus();
}

std::vector<std::string> CsvLineDecoder::dense_names() const {
  return columns_ ? DenseNamesOf(*columns_) : std::vector<std::string>();
}

std::vector<float> CsvLineDecoder::dense_fill() const {
  return columns_ ? DenseFillOf(*columns_) : std::vector<float>();
}

absl::Status CsvLineDecoder::SetHeader(absl::string_view line) {
  // A spec that names no column only skips each file's header: the lines'
  // columns are the first line's, whatever the header holds.
  if (!NamesCsvColumns(options_)) return absl::OkStatus();
  if (columns_.has_value()) {
    if (line == header_) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "the header ", QuotedField(line), " is not the first file's, ", QuotedField(header_)));
  }
  header_ = std::string(line);
  SplitFields(header_, delimiter_, &fields_);
  return Resolve(fields_, 0);
}

absl::Status CsvLineDecoder::Append(absl::string_view line, InMemorySource::Examples* examples) {
  SplitFields(line, delimiter_, &fields_);
  const int64_t num_columns = static_cast<int64_t>(fields_.size());
  if (!columns_.has_value()) RETURN_IF_ERROR(Resolve({}, num_columns));
  const std::vector<CsvColumns::Column>& columns = columns_->columns;
  if (num_columns != static_cast<int64_t>(columns.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(num_columns, " columns, ",
                     header_.empty() ? "the first line had " : "the header has ", columns.size()));
  }
  features_.assign(columns_->num_features, 0.0f);
  ids_.clear();
  float label = 0;
  for (int64_t c = 0; c < num_columns; ++c) {
    const CsvColumns::Column& column = columns[c];
    const absl::string_view field = fields_[c];
    switch (column.role) {
      case CsvColumns::Role::kLabel: {
        ASSIGN_OR_RETURN(const bool present, ParseNumber(field, column, c, &label));
        if (!present) {
          return absl::InvalidArgumentError(
              absl::StrCat(ColumnText(column, c), ", the label, is missing"));
        }
        break;
      }
      case CsvColumns::Role::kFeature: {
        float value = 0;
        ASSIGN_OR_RETURN(const bool present, ParseNumber(field, column, c, &value));
        if (!present) {
          if (!column.fill.has_value()) {
            return absl::InvalidArgumentError(absl::StrCat(
                ColumnText(column, c), " is missing (", QuotedField(field), "); ",
                column.name.empty() ? "fill_missing { column: \"*\" value: ... }"
                                    : absl::StrCat("fill_missing { column: ",
                                                   QuotedField(column.name), " value: ... }"),
                " gives it a value"));
          }
          value = *column.fill;
        }
        features_[column.feature] = value;
        break;
      }
      case CsvColumns::Role::kCategorical:
        ids_.push_back(CategoricalId(column.name, IsMissingField(field) ? "" : field,
                                     HashBucketsOf(options_)));
        break;
      case CsvColumns::Role::kIgnored:
        break;
    }
  }
  examples->dense_dim = columns_->num_features;
  if (examples->num_examples == 0) {
    examples->dense_names = DenseNamesOf(*columns_);
    examples->dense_fill = DenseFillOf(*columns_);
  }
  examples->dense_floats.insert(examples->dense_floats.end(), features_.begin(), features_.end());
  examples->labels.push_back(label);
  if (columns_->num_categorical > 0) {
    examples->sparse_dim = HashBucketsOf(options_);
    examples->num_fields = static_cast<int32_t>(columns_->num_categorical);
    if (examples->row_splits.empty()) examples->row_splits.push_back(0);
    examples->sparse_ids.insert(examples->sparse_ids.end(), ids_.begin(), ids_.end());
    examples->row_splits.push_back(static_cast<int64_t>(examples->sparse_ids.size()));
  }
  ++examples->num_examples;
  return absl::OkStatus();
}

namespace {

// InvalidArgument naming `file`: a delimiter of other than one character, a
// negative label column, no hash buckets.
absl::Status CheckCsvOptions(const CsvSource& options, absl::string_view file) {
  const std::string delimiter = options.delimiter().empty() ? "," : options.delimiter();
  if (delimiter.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": the delimiter must be one character, got \"", delimiter, "\""));
  }
  if (options.label_column() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": label_column must be >= 0"));
  }
  if (HashBucketsOf(options) <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": hash_buckets must be > 0"));
  }
  return absl::OkStatus();
}

// Appends the examples of `text`, the contents of `file`, to *examples
// through `decoder` (which keeps the column count from file to file).
absl::Status AppendCsv(absl::string_view text, const CsvSource& options, absl::string_view file,
                       CsvLineDecoder* decoder, InMemorySource::Examples* examples) {
  bool header_pending = options.has_header();
  return ForEachTextLine(text, file, [&](absl::string_view line, int64_t number) {
    if (line.empty()) return absl::OkStatus();
    if (header_pending) {
      header_pending = false;
      const absl::Status header = decoder->SetHeader(line);
      return header.ok() ? header : Malformed(file, number, header.message());
    }
    const absl::Status appended = decoder->Append(line, examples);
    if (!appended.ok()) return Malformed(file, number, appended.message());
    examples->label_places.Saw(examples->labels.back(),
                               [&] { return absl::StrCat(file, ":", number); });
    return absl::OkStatus();
  });
}

// The examples as a source, standardised as `options` say.
absl::StatusOr<std::unique_ptr<InMemorySource>> CsvSourceOf(const CsvSource& options,
                                                            InMemorySource::Examples examples) {
  if (options.standardize()) {
    Standardization standardization = StandardizationOf(examples.dense_floats, examples.dense_dim);
    examples.dense_mean = std::move(standardization.mean);
    examples.dense_scale = std::move(standardization.scale);
  }
  return InMemorySource::Create(std::move(examples));
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
  return CsvSourceOf(options, std::move(examples));
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
  return CsvSourceOf(options, std::move(examples));
}

std::unique_ptr<const RecordFormat> CsvRecordFormat(const CsvSource& options) {
  // The defaults filled, so that a spec as written and as filled in decode
  // alike and share their files' indexes (DecodingKey).
  CsvSource filled = options;
  filled.set_delimiter(std::string(1, DelimiterOf(options)));
  filled.set_hash_buckets(HashBucketsOf(options));
  if (NamesCsvColumns(options)) filled.set_has_header(true);
  return std::make_unique<CsvFormat>(std::move(filled));
}

}  // namespace pstrain
