#ifndef PSTRAIN_COMMON_DATA_CSV_COLUMNS_H_
#define PSTRAIN_COMMON_DATA_CSV_COLUMNS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "protos/job.pb.h"

namespace pstrain {

// What each column of a CSV file is for, from a CsvSource's options and
// the file's header. A value type.
struct CsvColumns {
  enum class Role { kLabel, kFeature, kCategorical, kIgnored };
  struct Column {
    Role role = Role::kIgnored;
    // The header's name; empty in a file without one.
    std::string name;
    // kFeature: its place among the dense features.
    int64_t feature = -1;
    // kFeature: the value a missing field takes; none: a missing field is
    // refused.
    std::optional<float> fill;
  };
  // In file order.
  std::vector<Column> columns;
  int64_t num_features = 0;
  int64_t num_categorical = 0;
};

// The columns of a file whose header holds `header` (the fields of its first
// line; empty without a header, when `num_columns` fields of the first
// line say how many there are). Without names, the label is label_column and
// every other column a feature. InvalidArgument naming what is wrong: a
// name the header does not hold (listing those it holds), a name twice in
// the header, a label column beyond the last, no label.
absl::StatusOr<CsvColumns> ResolveCsvColumns(const CsvSource& options,
                                             const std::vector<absl::string_view>& header,
                                             int64_t num_columns);

// The dense features' names and fills (NaN: none), in feature order, as
// DatasetInfo keeps them. Names are empty without a header.
std::vector<std::string> DenseNamesOf(const CsvColumns& columns);
std::vector<float> DenseFillOf(const CsvColumns& columns);

// Whether `field` stands for a missing value: empty, or "NA", "N/A", "NaN",
// "nan", "null" or "?".
bool IsMissingField(absl::string_view field);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_CSV_COLUMNS_H_
