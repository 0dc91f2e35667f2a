#ifndef PSTRAIN_COMMON_MODEL_MODEL_FACTORY_H_
#define PSTRAIN_COMMON_MODEL_MODEL_FACTORY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/data/dataset_info.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

// Builds the model a ModelSpec names. Dimensions the spec leaves at 0 are
// taken from the training data's `info` (input width, classes, image
// layout, sparse vocabulary, fields); set ones must agree with it.
// InvalidArgument naming the field: a dimension that cannot be resolved or
// disagrees with the data, or a model that cannot read this data (e.g. a CNN
// on data without an image layout). For a plug-in, the loader's errors
// (see plugin_model_loader.h), the model being created from the config
// string alone.
absl::StatusOr<std::unique_ptr<Model>> CreateModel(const ModelSpec& spec, const DatasetInfo& info,
                                                   const ModelContext& context);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_MODEL_FACTORY_H_
