#include "common/data/csv_columns.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data/field_text.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

using Role = CsvColumns::Role;

// The columns of a header by name. A name the header gives twice is
// refused only when a spec names it: which one it meant cannot be told.
class HeaderNames {
 public:
  explicit HeaderNames(const std::vector<absl::string_view>& header) : header_(header) {
    for (int64_t c = 0; c < static_cast<int64_t>(header.size()); ++c) {
      auto [it, added] = index_.emplace(std::string(header[c]), c);
      if (!added && it->second >= 0) it->second = -1 - c;  // -1 - the second column
    }
  }

  // The column `field` (a CsvSource field, for errors) names as `name`.
  // InvalidArgument: a name the header lacks (listing those it holds), or
  // holds twice; any name in a file without a header.
  absl::StatusOr<int64_t> Find(const std::string& name, absl::string_view field) const {
    const auto it = index_.find(name);
    if (it == index_.end()) {
      if (header_.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, " names column ", QuotedField(name),
                         ", but the data has no header (set has_header)"));
      }
      std::vector<std::string> quoted;
      for (absl::string_view held : header_) quoted.push_back(QuotedField(held));
      return absl::InvalidArgumentError(absl::StrCat(field, " names column ", QuotedField(name),
                                                     ", which the header does not hold; it holds ",
                                                     absl::StrJoin(quoted, ", ")));
    }
    if (it->second < 0) {
      const int64_t first = std::find(header_.begin(), header_.end(), name) - header_.begin();
      return absl::InvalidArgumentError(absl::StrCat(field, " names column ", QuotedField(name),
                                                     ", which the header holds twice (columns ",
                                                     first + 1, " and ", -it->second, ")"));
    }
    return it->second;
  }

 private:
  const std::vector<absl::string_view>& header_;
  absl::flat_hash_map<std::string, int64_t> index_;
};

// Gives each column `names` lists (the CsvSource `field`) `role`.
// InvalidArgument: a name Find refuses, or the label's column.
absl::Status AssignRole(const google::protobuf::RepeatedPtrField<std::string>& names,
                        absl::string_view field, Role role, const HeaderNames& header,
                        CsvColumns* resolved) {
  for (const std::string& name : names) {
    absl::StatusOr<int64_t> found = header.Find(name, field);
    if (!found.ok()) return found.status();
    if (resolved->columns[*found].role == Role::kLabel) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " names column ", QuotedField(name), ", the label"));
    }
    resolved->columns[*found].role = role;
  }
  return absl::OkStatus();
}

// The feature columns in feature order: those `features` names, in its
// order (every other column not yet given a role is then ignored), or
// every column without a role, in the file's order. Marks each.
// InvalidArgument: a name Find refuses, or one already the label or
// categorical.
absl::Status PlaceFeatures(const CsvSource& options, const HeaderNames& header,
                           const std::vector<bool>& ignored, CsvColumns* resolved) {
  std::vector<int64_t> features;
  const int64_t num_columns = static_cast<int64_t>(resolved->columns.size());
  if (options.features_size() > 0) {
    for (const std::string& name : options.features()) {
      absl::StatusOr<int64_t> found = header.Find(name, "features");
      if (!found.ok()) return found.status();
      if (resolved->columns[*found].role != Role::kIgnored ||
          std::find(features.begin(), features.end(), *found) != features.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("features names column ", QuotedField(name),
                         ", which is already the label, categorical or a feature"));
      }
      features.push_back(*found);
    }
  } else {
    for (int64_t c = 0; c < num_columns; ++c) {
      if (resolved->columns[c].role == Role::kIgnored && !ignored[c]) features.push_back(c);
    }
  }
  for (int64_t f = 0; f < static_cast<int64_t>(features.size()); ++f) {
    resolved->columns[features[f]].role = Role::kFeature;
    resolved->columns[features[f]].feature = f;
  }
  resolved->num_features = static_cast<int64_t>(features.size());
  return absl::OkStatus();
}

// Each feature's fill: "*" first, so that a column's own fill wins.
// InvalidArgument: a name Find refuses, or a column that is no feature.
absl::Status ApplyFills(const CsvSource& options, const HeaderNames& header, CsvColumns* resolved) {
  for (const CsvFill& fill : options.fill_missing()) {
    if (fill.column() != "*") continue;
    for (CsvColumns::Column& column : resolved->columns) {
      if (column.role == Role::kFeature) column.fill = fill.value();
    }
  }
  for (const CsvFill& fill : options.fill_missing()) {
    if (fill.column() == "*") continue;
    absl::StatusOr<int64_t> found = header.Find(fill.column(), "fill_missing");
    if (!found.ok()) return found.status();
    CsvColumns::Column& column = resolved->columns[*found];
    if (column.role != Role::kFeature) {
      return absl::InvalidArgumentError(absl::StrCat("fill_missing names column ",
                                                     QuotedField(fill.column()),
                                                     ", which is not a feature column"));
    }
    column.fill = fill.value();
  }
  return absl::OkStatus();
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
  const HeaderNames names(header);
  CsvColumns resolved;
  resolved.columns.resize(num_columns);
  for (int64_t c = 0; c < static_cast<int64_t>(header.size()); ++c) {
    resolved.columns[c].name = std::string(header[c]);
  }

  int64_t label = options.label_column();
  if (!options.label().empty()) {
    ASSIGN_OR_RETURN(label, names.Find(options.label(), "label"));
  } else if (label >= num_columns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "label_column ", label, " is beyond the last column (", num_columns, " columns)"));
  }
  resolved.columns[label].role = Role::kLabel;
  RETURN_IF_ERROR(
      AssignRole(options.categorical(), "categorical", Role::kCategorical, names, &resolved));
  // Ignored columns keep the role every column starts with; the list tells
  // them from the ones left over for the features.
  RETURN_IF_ERROR(AssignRole(options.ignore(), "ignore", Role::kIgnored, names, &resolved));
  std::vector<bool> ignored(num_columns, false);
  for (const std::string& name : options.ignore()) ignored[*names.Find(name, "ignore")] = true;
  RETURN_IF_ERROR(PlaceFeatures(options, names, ignored, &resolved));
  resolved.num_categorical =
      std::count_if(resolved.columns.begin(), resolved.columns.end(),
                    [](const CsvColumns::Column& c) { return c.role == Role::kCategorical; });
  RETURN_IF_ERROR(ApplyFills(options, names, &resolved));
  return resolved;
}

}  // namespace pstrain
