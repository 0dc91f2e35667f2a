#include "common/data/label_places.h"

#include <cmath>

namespace pstrain {

bool IsClassId(float label) {
  return label >= 0 && label < (1 << 24) && label == std::floor(label);
}

void LabelPlaces::Saw(float label, absl::FunctionRef<std::string()> where) {
  if (!largest.has_value() || label > largest->label) largest = LabelPlace{label, where()};
  if (!first_non_class.has_value() && !IsClassId(label)) {
    first_non_class = LabelPlace{label, where()};
  }
}

}  // namespace pstrain
