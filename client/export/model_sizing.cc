#include "client/export/model_sizing.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/config/job_mode.h"
#include "common/data/data_source.h"

namespace pstrain {

absl::StatusOr<DatasetInfo> ModelSizingInfo(const JobSpec& spec) {
  const bool trains = JobModeTrains(spec.mode()) && spec.has_train_data();
  const char* field = trains ? "train_data" : "eval_data";
  absl::StatusOr<std::unique_ptr<ExampleSource>> source =
      OpenExampleSource(trains ? spec.train_data() : spec.eval_data(), !trains);
  if (!source.ok()) {
    return absl::Status(source.status().code(),
                        absl::StrCat("the model is sized from the job's ", field,
                                     ", which cannot be read: ", source.status().message()));
  }
  return (*source)->info();
}

}  // namespace pstrain
