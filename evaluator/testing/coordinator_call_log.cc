#include "evaluator/testing/coordinator_call_log.h"

namespace pstrain {
namespace evaluator {

std::vector<EvalReport> CoordinatorCallLog::WaitForReports(size_t count,
                                                           absl::Duration timeout) const {
  calls_.WaitForCalls("ReportEval", count, timeout);
  return calls_.Requests<EvalReport>("ReportEval");
}

std::vector<int64_t> CoordinatorCallLog::released() const {
  std::vector<int64_t> steps;
  for (const ReleaseCheckpointRequest& release :
       calls_.Requests<ReleaseCheckpointRequest>("ReleaseCheckpoint")) {
    steps.push_back(release.step());
  }
  return steps;
}

int CoordinatorCallLog::registrations() const { return static_cast<int>(calls_.Count("Register")); }

bool CoordinatorCallLog::WaitForNotifications(int count, absl::Duration timeout) const {
  return calls_.WaitForStreamed("WatchCheckpoints", static_cast<size_t>(count), timeout);
}

}  // namespace evaluator
}  // namespace pstrain
