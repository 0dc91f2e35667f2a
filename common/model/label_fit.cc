#include "common/model/label_fit.h"

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace {

absl::Status Refused(absl::string_view field, const LabelPlace& place, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " has label ", place.label, " (", place.where, "); ", why));
}

}  // namespace

absl::Status CheckLabelsFit(const Model& model, const DatasetInfo& data, absl::string_view field) {
  const LabelPlaces& places = data.label_places;
  switch (model.prediction_kind()) {
    case PredictionKind::kRegression:
      return absl::OkStatus();
    case PredictionKind::kBinaryProbability: {
      const std::string takes = absl::StrCat("model ", model.name(), " takes labels 0 and 1");
      if (places.first_non_class.has_value()) {
        return Refused(field, *places.first_non_class, takes);
      }
      if (places.largest.has_value() && places.largest->label > 1) {
        return Refused(field, *places.largest, takes);
      }
      return absl::OkStatus();
    }
    case PredictionKind::kClassProbabilities: {
      const int64_t classes = model.prediction_width();
      const std::string takes = absl::StrCat("model ", model.name(), "'s classes are 0 to ",
                                             classes - 1, " (num_classes ", classes,
                                             "); a regression (mlp's regression: true, "
                                             "linear_regression) takes any number");
      if (places.first_non_class.has_value()) {
        return Refused(field, *places.first_non_class, takes);
      }
      if (places.largest.has_value() && places.largest->label >= classes) {
        return Refused(field, *places.largest, takes);
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace pstrain
