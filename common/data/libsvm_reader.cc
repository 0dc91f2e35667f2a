#include "common/data/libsvm_reader.h"

#include <algorithm>
#include <cmath>
#include <utility>

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

absl::StatusOr<std::unique_ptr<InMemorySource>> ParseLibsvm(absl::string_view text,
                                                            const LibsvmSource& options,
                                                            absl::string_view file) {
  if (options.num_features() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": num_features must be >= 0"));
  }
  const int64_t base = options.zero_based() ? 0 : 1;
  InMemorySource::Examples examples;
  examples.row_splits.push_back(0);
  int64_t largest = -1;
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const size_t comment = line.find('#');
    if (comment != absl::string_view::npos) line = line.substr(0, comment);
    std::vector<absl::string_view> tokens =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (tokens.empty()) continue;
    float label;
    if (!absl::SimpleAtof(tokens[0], &label) || !std::isfinite(label)) {
      return Malformed(file, line_number,
                       absl::StrCat("label \"", tokens[0], "\" is not a number"));
    }
    int64_t previous = -1;
    for (size_t t = 1; t < tokens.size(); ++t) {
      const size_t colon = tokens[t].find(':');
      if (colon == absl::string_view::npos) {
        return Malformed(file, line_number,
                         absl::StrCat("\"", tokens[t], "\" is not an index:value pair"));
      }
      int64_t index;
      float value;
      if (!absl::SimpleAtoi(tokens[t].substr(0, colon), &index) || index < base) {
        return Malformed(
            file, line_number,
            absl::StrCat("index \"", tokens[t].substr(0, colon), "\" is not an integer >= ", base));
      }
      if (!absl::SimpleAtof(tokens[t].substr(colon + 1), &value) || !std::isfinite(value)) {
        return Malformed(file, line_number,
                         absl::StrCat("value \"", tokens[t].substr(colon + 1), "\" of index ",
                                      index, " is not a number"));
      }
      const int64_t id = index - base;
      if (id <= previous) {
        return Malformed(file, line_number,
                         absl::StrCat("index ", index, " after ", previous + base,
                                      ": indices must be strictly ascending"));
      }
      if (options.num_features() > 0 && id >= options.num_features()) {
        return Malformed(
            file, line_number,
            absl::StrCat("index ", index, " beyond num_features ", options.num_features()));
      }
      previous = id;
      largest = std::max(largest, id);
      examples.sparse_ids.push_back(id);
      examples.sparse_values.push_back(value);
    }
    examples.labels.push_back(label);
    examples.row_splits.push_back(static_cast<int64_t>(examples.sparse_ids.size()));
    ++examples.num_examples;
  }
  if (examples.num_examples == 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": no examples"));
  }
  const bool plus_minus_one = std::all_of(examples.labels.begin(), examples.labels.end(),
                                          [](float l) { return l == 1 || l == -1; });
  if (plus_minus_one) {
    for (float& label : examples.labels) label = label > 0 ? 1 : 0;
  }
  examples.sparse_dim = options.num_features() > 0 ? options.num_features() : largest + 1;
  if (examples.sparse_dim == 0) examples.sparse_dim = 1;
  return InMemorySource::Create(std::move(examples));
}

absl::StatusOr<std::unique_ptr<InMemorySource>> LoadLibsvm(const LibsvmSource& options) {
  if (options.path().empty()) return absl::InvalidArgumentError("libsvm.path is required");
  absl::StatusOr<ByteBuffer> text = ReadFileContents(options.path());
  if (!text.ok()) return text.status();
  return ParseLibsvm(text->view(), options, options.path());
}

}  // namespace pstrain
