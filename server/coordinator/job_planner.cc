#include "server/coordinator/job_planner.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/config/job_mode.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/data_source.h"
#include "common/data/file_patterns.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model_factory.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace coordinator {

absl::StatusOr<JobPlan> ModelJobPlanner::Plan(const JobSpec& spec) {
  const bool trains = JobModeTrains(spec.mode());
  const char* field = trains ? "train_data" : "eval_data";
  const DataSpec& data = trains ? spec.train_data() : spec.eval_data();
  absl::StatusOr<std::unique_ptr<ExampleSource>> source =
      OpenExampleSource(data, trains ? PassMode::kTrain : PassMode::kEval);
  if (!source.ok()) {
    return absl::Status(source.status().code(),
                        absl::StrCat(field, ": ", source.status().message()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ComputeContext> compute, ComputeContext::Create());
  ModelContext context;
  context.compute = compute.get();
  context.seed = spec.training().seed();
  absl::StatusOr<std::unique_ptr<Model>> model =
      CreateModel(spec.model(), (*source)->info(), context);
  if (!model.ok()) {
    return absl::Status(model.status().code(), absl::StrCat("model: ", model.status().message()));
  }
  JobPlan plan;
  for (VariableDef& def : (*model)->Variables()) plan.variables.push_back(std::move(def.spec));
  plan.num_records = trains ? (*source)->num_examples() : 0;
  if (trains && (*source)->block_layout() != nullptr) {
    plan.records_per_window = StreamBlockRecordsOf(data) * ShuffleWindowBlocksOf(data);
  }
  plan.description =
      absl::StrCat((*model)->name(), " on ", (*source)->info().DebugString(), " (", field, ")");
  return plan;
}

absl::Status CheckDataFilesExist(const JobSpec& spec) {
  const std::pair<const char*, const DataSpec*> read[] = {
      {"train_data", JobModeTrains(spec.mode()) ? &spec.train_data() : nullptr},
      {"eval_data", JobModeEvaluates(spec.mode()) ? &spec.eval_data() : nullptr}};
  for (const auto& [field, data] : read) {
    if (data == nullptr) continue;
    const std::unique_ptr<const RecordFormat> format = StreamableFormatOf(*data);
    if (format == nullptr) continue;  // no files (synthetic), or a folder read whole
    if (absl::StatusOr<std::vector<std::string>> files = ExpandFilePatterns(format->patterns());
        !files.ok()) {
      return absl::Status(files.status().code(),
                          absl::StrCat(field, ": ", files.status().message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace coordinator
}  // namespace pstrain
