#include "common/data/criteo_reader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/field_text.h"
#include "common/data/file_contents.h"
#include "common/data/file_patterns.h"
#include "common/data/line_record_format.h"
#include "common/data/text_lines.h"
#include "common/data/tf_example_decoder.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

constexpr int kColumns = 1 + kCriteoIntegerFeatures + kCriteoCategoricalFeatures;

absl::Status Malformed(absl::string_view file, int64_t line, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": ", reason));
}

// The value of 1 to 16 hexadecimal digits, either case; false otherwise.
bool ParseHex(absl::string_view text, uint64_t* value) {
  if (text.empty() || text.size() > 16) return false;
  uint64_t parsed = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return false;
    }
    parsed = parsed << 4 | static_cast<uint64_t>(digit);
  }
  *value = parsed;
  return true;
}

// Splits `line` at tabs into *columns; the number of columns, which may
// exceed kColumns (only the first kColumns are kept).
int SplitColumns(absl::string_view line, std::array<absl::string_view, kColumns>* columns) {
  int count = 0;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    const absl::string_view column =
        line.substr(start, tab == absl::string_view::npos ? absl::string_view::npos : tab - start);
    if (count < kColumns) (*columns)[count] = column;
    ++count;
    if (tab == absl::string_view::npos) return count;
    start = tab + 1;
  }
}

}  // namespace

absl::string_view CriteoFieldName(int field) {
  static const auto* const names = [] {
    auto* names = new std::array<std::string, kCriteoCategoricalFeatures>;
    for (int f = 0; f < kCriteoCategoricalFeatures; ++f) (*names)[f] = absl::StrCat("C", f + 1);
    return names;
  }();
  return (*names)[field];
}

CriteoLineDecoder::CriteoLineDecoder(int64_t hash_buckets) : hash_buckets_(hash_buckets) {
  for (int f = 0; f < kCriteoCategoricalFeatures; ++f) {
    missing_ids_[f] = CategoricalId(CriteoFieldName(f), absl::string_view(), hash_buckets);
  }
}

absl::Status CriteoLineDecoder::Append(absl::string_view line, InMemorySource::Examples* examples) {
  std::array<absl::string_view, kColumns> columns;
  const int count = SplitColumns(line, &columns);
  if (count != kColumns) {
    return absl::InvalidArgumentError(
        absl::StrCat(count, " tab-separated columns; a Criteo line has ", kColumns, " (the label, ",
                     kCriteoIntegerFeatures, " integer and ", kCriteoCategoricalFeatures,
                     " categorical features)"));
  }
  if (columns[0] != "0" && columns[0] != "1") {
    return absl::InvalidArgumentError(
        absl::StrCat("label ", QuotedField(columns[0]), " is not 0 or 1"));
  }
  // Checked whole before any of it is appended.
  std::array<float, kCriteoIntegerFeatures> dense;
  for (int i = 0; i < kCriteoIntegerFeatures; ++i) {
    const absl::string_view value = columns[1 + i];
    int64_t x = 0;
    if (!value.empty() && !absl::SimpleAtoi(value, &x)) {
      return absl::InvalidArgumentError(absl::StrCat("integer feature I", i + 1, " (column ", 2 + i,
                                                     "): ", QuotedField(value),
                                                     " is not an integer"));
    }
    dense[i] = static_cast<float>(std::log1p(static_cast<double>(std::max<int64_t>(x, 0))));
  }
  std::array<int64_t, kCriteoCategoricalFeatures> ids;
  for (int f = 0; f < kCriteoCategoricalFeatures; ++f) {
    const int column = 1 + kCriteoIntegerFeatures + f;
    const absl::string_view value = columns[column];
    uint64_t category = 0;
    if (value.empty()) {
      ids[f] = missing_ids_[f];
    } else if (ParseHex(value, &category)) {
      ids[f] = CategoricalId(CriteoFieldName(f), static_cast<int64_t>(category), hash_buckets_);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("categorical feature ", CriteoFieldName(f), " (column ", column + 1,
                       "): ", QuotedField(value), " is not 1 to 16 hexadecimal digits"));
    }
  }
  examples->dense_dim = kCriteoIntegerFeatures;
  examples->num_fields = kCriteoCategoricalFeatures;
  examples->sparse_dim = hash_buckets_;
  if (examples->row_splits.empty()) examples->row_splits.push_back(0);
  examples->dense_floats.insert(examples->dense_floats.end(), dense.begin(), dense.end());
  examples->sparse_ids.insert(examples->sparse_ids.end(), ids.begin(), ids.end());
  examples->labels.push_back(columns[0] == "1" ? 1.0f : 0.0f);
  examples->row_splits.push_back(static_cast<int64_t>(examples->sparse_ids.size()));
  ++examples->num_examples;
  return absl::OkStatus();
}

absl::Status ParseCriteo(absl::string_view text, absl::string_view file, int64_t hash_buckets,
                         InMemorySource::Examples* examples) {
  if (hash_buckets <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": hash_buckets must be > 0, got ", hash_buckets));
  }
  examples->dense_dim = kCriteoIntegerFeatures;
  examples->num_fields = kCriteoCategoricalFeatures;
  examples->sparse_dim = hash_buckets;
  if (examples->row_splits.empty()) examples->row_splits.push_back(0);
  // Room for every line at once: growing by doubling within a file would
  // copy the examples again and again, and reserving exactly for each of
  // many files would do the same across them.
  const int64_t lines = std::count(text.begin(), text.end(), '\n') + 1;
  auto make_room = [](auto& values, int64_t more) {
    const size_t needed = values.size() + static_cast<size_t>(more);
    if (needed > values.capacity()) values.reserve(std::max(needed, 2 * values.capacity()));
  };
  make_room(examples->dense_floats, lines * kCriteoIntegerFeatures);
  make_room(examples->sparse_ids, lines * kCriteoCategoricalFeatures);
  make_room(examples->row_splits, lines);
  make_room(examples->labels, lines);

  CriteoLineDecoder decoder(hash_buckets);
  return ForEachTextLine(text, file, [&](absl::string_view line, int64_t number) {
    if (line.empty()) return absl::OkStatus();
    const absl::Status appended = decoder.Append(line, examples);
    return appended.ok() ? appended : Malformed(file, number, appended.message());
  });
}

namespace {

class CriteoRecordDecoder : public RecordDecoder {
 public:
  explicit CriteoRecordDecoder(int64_t hash_buckets) : decoder_(hash_buckets) {}
  absl::Status Append(absl::string_view record, InMemorySource::Examples* examples) override {
    return decoder_.Append(record, examples);
  }
  std::vector<int64_t> dense_widths() const override { return {kCriteoIntegerFeatures}; }
  bool one_id_per_field() const override { return true; }

 private:
  CriteoLineDecoder decoder_;
};

class CriteoFormat : public LineRecordFormat {
 public:
  explicit CriteoFormat(CriteoSource spec) : spec_(std::move(spec)) {}

  absl::string_view name() const override { return "criteo"; }
  std::vector<std::string> patterns() const override {
    return {spec_.paths().begin(), spec_.paths().end()};
  }
  std::string DecodingKey() const override {
    return absl::StrCat("criteo hash_buckets: ", HashBucketsOf(spec_));
  }
  std::unique_ptr<RecordDecoder> NewDecoder(const RecordSummary*) const override {
    return std::make_unique<CriteoRecordDecoder>(HashBucketsOf(spec_));
  }
  void Describe(const RecordSummary&, DatasetInfo* info) const override {
    info->sparse_dim = HashBucketsOf(spec_);
    info->num_fields = kCriteoCategoricalFeatures;
    info->num_classes = 2;
  }

 private:
  const CriteoSource spec_;
};

}  // namespace

std::unique_ptr<const RecordFormat> CriteoRecordFormat(const CriteoSource& spec) {
  return std::make_unique<CriteoFormat>(spec);
}

absl::StatusOr<std::unique_ptr<InMemorySource>> LoadCriteo(const CriteoSource& spec) {
  const int64_t hash_buckets = HashBucketsOf(spec);
  if (hash_buckets <= 0) {  // 0 takes the default
    return absl::InvalidArgumentError(
        absl::StrCat("criteo.hash_buckets must be > 0, got ", hash_buckets));
  }
  if (spec.paths().empty()) return absl::InvalidArgumentError("criteo.paths needs a file");
  const std::vector<std::string> patterns(spec.paths().begin(), spec.paths().end());
  ASSIGN_OR_RETURN(const std::vector<std::string> files, ExpandFilePatterns(patterns));
  InMemorySource::Examples examples;
  for (const std::string& file : files) {
    ASSIGN_OR_RETURN(const ByteBuffer text, ReadFileContents(file));
    RETURN_IF_ERROR(ParseCriteo(text.view(), file, hash_buckets, &examples));
  }
  if (examples.num_examples == 0) {
    return absl::InvalidArgumentError(absl::StrCat("criteo: no examples in ", files.size(),
                                                   " file(s): ", files.front(),
                                                   files.size() > 1 ? ", ..." : ""));
  }
  return InMemorySource::Create(std::move(examples));
}

}  // namespace pstrain
