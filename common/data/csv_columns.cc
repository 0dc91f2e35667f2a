#include "common/data/csv_columns.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data/field_text.h"

namespace pstrain {
namespace {

using Role = CsvColumns::Role;

// Header names to columns; a name the header gives twice maps to -1 - the
// second column (which one a spec naming it meant cannot be told).
absl::flat_hash_map<std::string, int64_t> IndexHeader(
    const std::vector<absl::string_view>& header) {
  absl::flat_hash_map<std::string, int64_t> index;
  for (int64_t c = 0; c < static_cast<int64_t>(header.size()); ++c) {
    auto [it, added] = index.emplace(std::string(header[c]), c);
    if (!added && it->second >= 0) it->second = -1 - c;
  }
  return index;
}

std::string HeaderNames(const std::vector<absl::string_view>& header) {
  std::vector<std::string> quoted;
  for (absl::string_view name : header) quoted.push_back(QuotedField(name));
  return absl::StrJoin(quoted, ", ");
}

}  // namespace

std::vector<std::string> DenseNamesOf(const CsvColumns& columns) {
  std::vector<std::string> names(columns.num_features);
  bool named = false;
  for (const CsvColumns::Column& column : columns.columns) {
    if (column.role != Role::kFeature) continue;
    names[column.feature] = column.name;
    named = named || !column.name.empty();
  }
  if (!named) names.clear();
  return names;
}

std::vector<float> DenseFillOf(const CsvColumns& columns) {
  std::vector<float> fill(columns.num_features, std::numeric_limits<float>::quiet_NaN());
  for (const CsvColumns::Column& column : columns.columns) {
    if (column.role == Role::kFeature && column.fill.has_value())
      fill[column.feature] = *column.fill;
  }
  return fill;
}

bool IsMissingField(absl::string_view field) {
  return field.empty() || field == "NA" || field == "N/A" || field == "NaN" || field == "nan" ||
         field == "null" || field == "?";
}

absl::StatusOr<CsvColumns> ResolveCsvColumns(const CsvSource& options,
                                             const std::vector<absl::string_view>& header,
                                             int64_t num_columns) {
  if (!header.empty()) num_columns = static_cast<int64_t>(header.size());
  CsvColumns resolved;
  resolved.columns.resize(num_columns);
  for (int64_t c = 0; c < static_cast<int64_t>(header.size()); ++c) {
    resolved.columns[c].name = std::string(header[c]);
  }
  const absl::flat_hash_map<std::string, int64_t> index = IndexHeader(header);
  const auto find = [&](const std::string& name,
                        absl::string_view field) -> absl::StatusOr<int64_t> {
    const auto it = index.find(name);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          header.empty()
              ? absl::StrCat(field, " names column ", QuotedField(name),
                             ", but the data has no header (set has_header)")
              : absl::StrCat(field, " names column ", QuotedField(name),
                             ", which the header does not hold; it holds ", HeaderNames(header)));
    }
    if (it->second < 0) {
      const int64_t second = -1 - it->second;
      const int64_t first = std::find(header.begin(), header.end(), name) - header.begin();
      return absl::InvalidArgumentError(absl::StrCat(field, " names column ", QuotedField(name),
                                                     ", which the header holds twice (columns ",
                                                     first + 1, " and ", second + 1, ")"));
    }
    return it->second;
  };

  int64_t label = options.label_column();
  if (!options.label().empty()) {
    absl::StatusOr<int64_t> found = find(options.label(), "label");
    if (!found.ok()) return found.status();
    label = *found;
  } else if (label >= num_columns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "label_column ", label, " is beyond the last column (", num_columns, " columns)"));
  }
  resolved.columns[label].role = Role::kLabel;
  const auto assign = [&](const google::protobuf::RepeatedPtrField<std::string>& names,
                          absl::string_view field, Role role) -> absl::Status {
    for (const std::string& name : names) {
      absl::StatusOr<int64_t> found = find(name, field);
      if (!found.ok()) return found.status();
      if (*found == label) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, " names column ", QuotedField(name), ", the label"));
      }
      resolved.columns[*found].role = role;
    }
    return absl::OkStatus();
  };
  absl::Status status = assign(options.categorical(), "categorical", Role::kCategorical);
  if (status.ok()) status = assign(options.ignore(), "ignore", Role::kIgnored);
  if (!status.ok()) return status;

  // Features: those named, in that order; else every column left, in order.
  std::vector<int64_t> features;
  if (options.features_size() > 0) {
    for (int64_t c = 0; c < num_columns; ++c) {
      if (resolved.columns[c].role != Role::kLabel) resolved.columns[c].role = Role::kIgnored;
    }
    for (const std::string& name : options.categorical()) {
      resolved.columns[index.at(name)].role = Role::kCategorical;
    }
    for (const std::string& name : options.features()) {
      absl::StatusOr<int64_t> found = find(name, "features");
      if (!found.ok()) return found.status();
      if (resolved.columns[*found].role != Role::kIgnored) {
        return absl::InvalidArgumentError(
            absl::StrCat("features names column ", QuotedField(name),
                         ", which is already the label or categorical"));
      }
      features.push_back(*found);
    }
  } else {
    for (int64_t c = 0; c < num_columns; ++c) {
      bool ignored = false;
      for (const std::string& name : options.ignore()) ignored = ignored || index.at(name) == c;
      if (resolved.columns[c].role == Role::kIgnored && !ignored) features.push_back(c);
    }
  }
  for (int64_t f = 0; f < static_cast<int64_t>(features.size()); ++f) {
    CsvColumns::Column& column = resolved.columns[features[f]];
    column.role = Role::kFeature;
    column.feature = f;
  }
  resolved.num_features = static_cast<int64_t>(features.size());
  resolved.num_categorical = static_cast<int64_t>(
      std::count_if(resolved.columns.begin(), resolved.columns.end(),
                    [](const CsvColumns::Column& c) { return c.role == Role::kCategorical; }));

  // Fills: "*" first, so that a column's own fill wins.
  for (const CsvFill& fill : options.fill_missing()) {
    if (fill.column() != "*") continue;
    for (CsvColumns::Column& column : resolved.columns) {
      if (column.role == Role::kFeature) column.fill = fill.value();
    }
  }
  for (const CsvFill& fill : options.fill_missing()) {
    if (fill.column() == "*") continue;
    absl::StatusOr<int64_t> found = find(fill.column(), "fill_missing");
    if (!found.ok()) return found.status();
    CsvColumns::Column& column = resolved.columns[*found];
    if (column.role != Role::kFeature) {
      return absl::InvalidArgumentError(absl::StrCat("fill_missing names column ",
                                                     QuotedField(fill.column()),
                                                     ", which is not a feature column"));
    }
    column.fill = fill.value();
  }
  return resolved;
}

}  // namespace pstrain
