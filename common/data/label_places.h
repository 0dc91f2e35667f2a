#ifndef PSTRAIN_COMMON_DATA_LABEL_PLACES_H_
#define PSTRAIN_COMMON_DATA_LABEL_PLACES_H_

#include <optional>
#include <string>

#include "absl/functional/function_ref.h"

namespace pstrain {

// Whether `label` can be a class id: an integer in [0, 2^24) (beyond 2^24
// floats stop being exact integers; no data set has that many classes).
bool IsClassId(float label);

// A label and where it was read: "train.csv:9", "a.tfrecord: record 3".
struct LabelPlace {
  float label = 0;
  std::string where;
};

// Where the labels that decide a data set's classes stand, so that an
// error about classes can name a file and line, as the readers' own errors
// do. A value type; readers that know where each record is fill it.
struct LabelPlaces {
  // The largest label, at its first place.
  std::optional<LabelPlace> largest;
  // The first label that is not a class id (negative, fractional, huge).
  std::optional<LabelPlace> first_non_class;

  // Notes `label`, read at where() (called only when the place is kept).
  void Saw(float label, absl::FunctionRef<std::string()> where);
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_DATA_LABEL_PLACES_H_
