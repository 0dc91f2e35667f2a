#include "common/data/libsvm_reader.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/data/field_text.h"
#include "common/data/file_contents.h"
#include "common/data/file_patterns.h"
#include "common/data/line_record_format.h"
#include "common/data/text_lines.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

absl::Status Malformed(absl::string_view file, int64_t line, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", reason));
}

// `line` without a "# comment".
absl::string_view WithoutComment(absl::string_view line) { return line.substr(0, line.find('#')); }

class LibsvmRecordDecoder : public RecordDecoder {
 public:
  LibsvmRecordDecoder(const LibsvmSource& options, const RecordSummary* expected)
      : decoder_(options),
        zero_one_labels_(expected != nullptr && expected->plus_minus_one_labels) {}
  absl::Status Append(absl::string_view record, InMemorySource::Examples* examples) override {
    RETURN_IF_ERROR(decoder_.Append(record, examples));
    if (zero_one_labels_) examples->labels.back() = examples->labels.back() > 0 ? 1 : 0;
    return absl::OkStatus();
  }
  std::vector<int64_t> dense_widths() const override { return {}; }
  bool one_id_per_field() const override { return false; }

 private:
  LibsvmLineDecoder decoder_;
  // Binary data labelled -1/+1, read as 0/1 as the in-memory reader does.
  const bool zero_one_labels_;
};

class LibsvmFormat : public LineRecordFormat {
 public:
  explicit LibsvmFormat(LibsvmSource options) : options_(std::move(options)) {}

  absl::string_view name() const override { return "libsvm"; }
  std::vector<std::string> patterns() const override { return PathAndPatternsOf(options_); }
  std::string DecodingKey() const override {
    LibsvmSource decoding = options_;
    decoding.clear_path();
    decoding.clear_paths();
    return absl::StrCat("libsvm ", decoding.ShortDebugString());
  }
  std::unique_ptr<RecordDecoder> NewDecoder(const RecordSummary* expected) const override {
    return std::make_unique<LibsvmRecordDecoder>(options_, expected);
  }
  void Describe(const RecordSummary& summary, DatasetInfo* info) const override {
    info->sparse_dim = options_.num_features() > 0 ? options_.num_features()
                                                   : std::max<int64_t>(summary.sparse_ids_end, 1);
    info->num_classes = summary.plus_minus_one_labels ? 2 : summary.num_classes;
  }

 protected:
  bool IsRecord(absl::string_view line) const override {
    return WithoutComment(line).find_first_not_of(" \t\r") != absl::string_view::npos;
  }

 private:
  const LibsvmSource options_;
};

}  // namespace

LibsvmLineDecoder::LibsvmLineDecoder(const LibsvmSource& options)
    : base_(options.zero_based() ? 0 : 1), num_features_(options.num_features()) {}

absl::Status LibsvmLineDecoder::Append(absl::string_view line, InMemorySource::Examples* examples) {
  tokens_ = absl::StrSplit(WithoutComment(line), absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
  if (tokens_.empty()) return absl::InvalidArgumentError("no label");
  float label;
  if (!absl::SimpleAtof(tokens_[0], &label) || !std::isfinite(label)) {
    return absl::InvalidArgumentError(
        absl::StrCat("label ", QuotedField(tokens_[0]), " is not a number"));
  }
  // Checked whole before any of it is appended.
  ids_.clear();
  values_.clear();
  int64_t previous = -1;
  for (size_t t = 1; t < tokens_.size(); ++t) {
    const size_t colon = tokens_[t].find(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(QuotedField(tokens_[t]), " is not an index:value pair"));
    }
    int64_t index;
    float value;
    if (!absl::SimpleAtoi(tokens_[t].substr(0, colon), &index) || index < base_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index ", QuotedField(tokens_[t].substr(0, colon)), " is not an integer >= ", base_));
    }
    if (!absl::SimpleAtof(tokens_[t].substr(colon + 1), &value) || !std::isfinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat("value ",
                                                     QuotedField(tokens_[t].substr(colon + 1)),
                                                     " of index ", index, " is not a number"));
    }
    const int64_t id = index - base_;
    if (id <= previous) {
      return absl::InvalidArgumentError(absl::StrCat("index ", index, " after ", previous + base_,
                                                     ": indices must be strictly ascending"));
    }
    if (num_features_ > 0 && id >= num_features_) {
      return absl::InvalidArgumentError(
          absl::StrCat("index ", index, " beyond num_features ", num_features_));
    }
    previous = id;
    ids_.push_back(id);
    values_.push_back(value);
  }
  if (examples->row_splits.empty()) examples->row_splits.push_back(0);
  examples->sparse_ids.insert(examples->sparse_ids.end(), ids_.begin(), ids_.end());
  examples->sparse_values.insert(examples->sparse_values.end(), values_.begin(), values_.end());
  examples->labels.push_back(label);
  examples->row_splits.push_back(static_cast<int64_t>(examples->sparse_ids.size()));
  ++examples->num_examples;
  return absl::OkStatus();
}

namespace {

// Appends the examples of `text`, the contents of `file`, to *examples.
absl::Status AppendLibsvm(absl::string_view text, absl::string_view file,
                          LibsvmLineDecoder* decoder, InMemorySource::Examples* examples) {
  return ForEachTextLine(text, file, [&](absl::string_view line, int64_t number) {
    if (WithoutComment(line).find_first_not_of(" \t\r") == absl::string_view::npos) {
      return absl::OkStatus();
    }
    const absl::Status appended = decoder->Append(line, examples);
    if (!appended.ok()) return Malformed(file, number, appended.message());
    examples->label_places.Saw(examples->labels.back(),
                               [&] { return absl::StrCat(file, ":", number); });
    return absl::OkStatus();
  });
}

// The examples of every file read, their -1/+1 labels as 0/1 and their
// width set. InvalidArgument naming `files`: no examples.
absl::StatusOr<std::unique_ptr<InMemorySource>> FinishLibsvm(const LibsvmSource& options,
                                                             absl::string_view files,
                                                             InMemorySource::Examples examples) {
  if (examples.num_examples == 0) {
    return absl::InvalidArgumentError(absl::StrCat(files, ": no examples"));
  }
  const bool plus_minus_one = std::all_of(examples.labels.begin(), examples.labels.end(),
                                          [](float l) { return l == 1 || l == -1; });
  if (plus_minus_one) {
    for (float& label : examples.labels) label = label > 0 ? 1 : 0;
    // -1 read as 0 is a class id after all; +1 read as 1 stays largest.
    examples.label_places.first_non_class.reset();
    if (examples.label_places.largest.has_value()) examples.label_places.largest->label = 1;
  }
  const int64_t largest =
      examples.sparse_ids.empty()
          ? -1
          : *std::max_element(examples.sparse_ids.begin(), examples.sparse_ids.end());
  examples.sparse_dim = options.num_features() > 0 ? options.num_features() : largest + 1;
  if (examples.sparse_dim == 0) examples.sparse_dim = 1;
  return InMemorySource::Create(std::move(examples));
}

}  // namespace

absl::StatusOr<std::unique_ptr<InMemorySource>> ParseLibsvm(absl::string_view text,
                                                            const LibsvmSource& options,
                                                            absl::string_view file) {
  if (options.num_features() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": num_features must be >= 0"));
  }
  InMemorySource::Examples examples;
  examples.row_splits.push_back(0);
  LibsvmLineDecoder decoder(options);
  RETURN_IF_ERROR(AppendLibsvm(text, file, &decoder, &examples));
  return FinishLibsvm(options, file, std::move(examples));
}

absl::StatusOr<std::unique_ptr<InMemorySource>> LoadLibsvm(const LibsvmSource& options) {
  const std::vector<std::string> patterns = PathAndPatternsOf(options);
  if (patterns.empty()) return absl::InvalidArgumentError("libsvm.path is required");
  if (options.num_features() < 0) {
    return absl::InvalidArgumentError("libsvm.num_features must be >= 0");
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> files, ExpandFilePatterns(patterns));
  InMemorySource::Examples examples;
  examples.row_splits.push_back(0);
  LibsvmLineDecoder decoder(options);
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(const ByteBuffer text, ReadFileContents(file));
    RETURN_IF_ERROR(AppendLibsvm(text.view(), file, &decoder, &examples));
  }
  return FinishLibsvm(options, absl::StrCat(files.front(), files.size() > 1 ? ", ..." : ""),
                      std::move(examples));
}

std::unique_ptr<const RecordFormat> LibsvmRecordFormat(const LibsvmSource& options) {
  return std::make_unique<LibsvmFormat>(options);
}

}  // namespace pstrain
