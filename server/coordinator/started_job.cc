#include "server/coordinator/started_job.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace pstrain {
namespace coordinator {

std::optional<StopDecision> StartedJob::CheckEndOfData(int64_t step) const {
  const std::string epochs_text = absl::StrCat(epochs, epochs == 1 ? " epoch" : " epochs");
  if (data->end_of_data()) {
    return stop->Decide(STOP_REASON_END_OF_DATA,
                        absl::StrCat("trained on every record of ", epochs_text), step);
  }
  if (std::optional<int64_t> end = data->sync_rounds_end(); end.has_value() && step >= *end) {
    return stop->Decide(
        STOP_REASON_END_OF_DATA,
        absl::StrCat("trained every sync round that ", epochs_text,
                     " fills: a round takes a batch from each worker, and a worker's "
                     "share of the last epoch had no batch left for round ",
                     *end, "; the records still leased to others stay untrained"),
        step);
  }
  return stop->decision();
}

}  // namespace coordinator
}  // namespace pstrain
