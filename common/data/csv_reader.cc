#include "common/data/csv_reader.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/data/file_contents.h"

namespace pstrain {
namespace {

absl::Status Malformed(absl::string_view file, int64_t line, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", reason));
}

}  // namespace

absl::StatusOr<std::unique_ptr<InMemorySource>> ParseCsv(absl::string_view text,
                                                         const CsvSource& options,
                                                         absl::string_view file) {
  const std::string delimiter = options.delimiter().empty() ? "," : options.delimiter();
  if (delimiter.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": the delimiter must be one character, got \"", delimiter, "\""));
  }
  if (options.label_column() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": label_column must be >= 0"));
  }
  InMemorySource::Examples examples;
  int64_t columns = -1;
  int64_t line_number = 0;
  bool header_pending = options.has_header();
  std::vector<float> row;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (header_pending) {
      header_pending = false;
      continue;
    }
    row.clear();
    int64_t column = 0;
    for (absl::string_view field : absl::StrSplit(line, delimiter[0])) {
      float value;
      if (!absl::SimpleAtof(field, &value) || !std::isfinite(value)) {
        return Malformed(file, line_number,
                         absl::StrCat("column ", column + 1, ": \"", field, "\" is not a number"));
      }
      row.push_back(value);
      ++column;
    }
    if (columns < 0) {
      columns = column;
      if (options.label_column() >= columns) {
        return Malformed(file, line_number,
                         absl::StrCat("label_column ", options.label_column(),
                                      " is beyond the last column (", columns, " columns)"));
      }
      examples.dense_dim = columns - 1;
    } else if (column != columns) {
      return Malformed(file, line_number,
                       absl::StrCat(column, " columns, the first line had ", columns));
    }
    for (int64_t c = 0; c < columns; ++c) {
      if (c == options.label_column()) {
        examples.labels.push_back(row[c]);
      } else {
        examples.dense_floats.push_back(row[c]);
      }
    }
    ++examples.num_examples;
  }
  if (examples.num_examples == 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": no examples"));
  }
  return InMemorySource::Create(std::move(examples));
}

absl::StatusOr<std::unique_ptr<InMemorySource>> LoadCsv(const CsvSource& options) {
  if (options.path().empty()) return absl::InvalidArgumentError("csv.path is required");
  absl::StatusOr<ByteBuffer> text = ReadFileContents(options.path());
  if (!text.ok()) return text.status();
  return ParseCsv(text->view(), options, options.path());
}

}  // namespace pstrain
