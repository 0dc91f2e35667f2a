#ifndef PSTRAIN_CLIENT_EXPORT_MODEL_SIZING_H_
#define PSTRAIN_CLIENT_EXPORT_MODEL_SIZING_H_

// Kept apart from checkpoint_export.h: the data readers' header and the
// checkpoint protos both declare a pstrain::RecordRange.

#include "absl/status/statusor.h"
#include "common/data/dataset_info.h"
#include "protos/job.pb.h"

namespace pstrain {

// What the job's model is sized from when its spec leaves a dimension to
// the data, as the coordinator's planner decides it: the training data when
// the mode trains, the evaluation data otherwise. Reads all of that data.
// The data readers' errors (NotFound, InvalidArgument naming the file),
// prefixed with the field they came from.
absl::StatusOr<DatasetInfo> ModelSizingInfo(const JobSpec& spec);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_EXPORT_MODEL_SIZING_H_
