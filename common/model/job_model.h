#ifndef PSTRAIN_COMMON_MODEL_JOB_MODEL_H_
#define PSTRAIN_COMMON_MODEL_JOB_MODEL_H_

// A job's model as every role builds it from the job's spec: the worker,
// the evaluator, train-local and export. Kept apart from headers that
// include the checkpoint protos: the data readers' header and those protos
// both declare a pstrain::RecordRange.

#include <memory>

#include "absl/status/statusor.h"
#include "common/data/dataset_info.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model.h"
#include "protos/job.pb.h"

namespace pstrain {

// Whether the job's model is sized from its training data (the mode trains
// and names some) rather than its evaluation data, as the coordinator's
// planner decides it.
bool SizesFromTrainData(const JobSpec& spec);

// The shape of the data the job's model is sized from (SizesFromTrainData).
// Reads all of that data. The data readers' errors (NotFound,
// InvalidArgument naming the file), prefixed with the field they came from.
absl::StatusOr<DatasetInfo> ModelSizingInfo(const JobSpec& spec);

// The model and the compute context it runs on.
struct JobModel {
  std::unique_ptr<ComputeContext> compute;
  // Declared after `compute`, which it borrows.
  std::unique_ptr<Model> model;
};

// Builds the job's model sized by `sized_from` (ModelSizingInfo, or the
// info of that data when the caller has it open), on a compute context of
// training.compute_threads threads, with initial values from
// training.seed. The errors of ComputeContext::Create and CreateModel.
absl::StatusOr<JobModel> CreateJobModel(const JobSpec& spec, const DatasetInfo& sized_from);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_MODEL_JOB_MODEL_H_
