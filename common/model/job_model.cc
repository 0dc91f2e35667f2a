#include "common/model/job_model.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_mode.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/data_source.h"
#include "common/model/model_factory.h"
#include "common/status/status_macros.h"

namespace pstrain {

bool SizesFromTrainData(const JobSpec& spec) {
  return JobModeTrains(spec.mode()) && spec.has_train_data();
}

absl::StatusOr<DatasetInfo> ModelSizingInfo(const JobSpec& spec) {
  const bool trains = SizesFromTrainData(spec);
  const char* field = trains ? "train_data" : "eval_data";
  absl::StatusOr<std::unique_ptr<ExampleSource>> source = OpenExampleSource(
      trains ? spec.train_data() : spec.eval_data(), trains ? PassMode::kTrain : PassMode::kEval);
  if (!source.ok()) {
    return absl::Status(source.status().code(),
                        absl::StrCat("the model is sized from the job's ", field,
                                     ", which cannot be read: ", source.status().message()));
  }
  return (*source)->info();
}

absl::StatusOr<JobModel> CreateJobModel(const JobSpec& spec, const DatasetInfo& sized_from) {
  JobModel job_model;
  ComputeOptions compute;
  compute.num_threads = ComputeThreadsOf(spec.training());
  ASSIGN_OR_RETURN(job_model.compute, ComputeContext::Create(compute));
  ModelContext context;
  context.compute = job_model.compute.get();
  context.seed = spec.training().seed();
  ASSIGN_OR_RETURN(job_model.model, CreateModel(spec.model(), sized_from, context));
  return job_model;
}

}  // namespace pstrain
