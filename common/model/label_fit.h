#ifndef PSTRAIN_COMMON_MODEL_LABEL_FIT_H_
#define PSTRAIN_COMMON_MODEL_LABEL_FIT_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/data/dataset_info.h"
#include "common/model/model.h"

namespace pstrain {

// Whether the labels of `data` (the job's `field`, "train_data" or
// "eval_data") are ones `model` can be trained or scored on: class ids
// below its width for class probabilities, 0 or 1 for a binary
// probability; any number for a regression. Decided from the data's
// LabelPlaces, so that a data set is refused as it is opened, naming the
// file and line of the label at fault, rather than batch by batch as the
// loss meets it. Data without places passes (the loss still checks).
// InvalidArgument: "eval_data has label 8 (test.csv:5); model mlp's
// classes are 0 to 7 (num_classes 8)".
absl::Status CheckLabelsFit(const Model& model, const DatasetInfo& data, absl::string_view field);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_LABEL_FIT_H_
