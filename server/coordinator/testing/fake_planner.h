#ifndef PSTRAIN_SERVER_COORDINATOR_TESTING_FAKE_PLANNER_H_
#define PSTRAIN_SERVER_COORDINATOR_TESTING_FAKE_PLANNER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/coordinator/job_planner.h"

namespace pstrain {
namespace coordinator {

// Plans every job as two dense variables and one embedding table over
// `num_records` records, without reading data or building a model.
class FakePlanner final : public JobPlanner {
 public:
  explicit FakePlanner(int64_t num_records = 10000) : num_records_(num_records) {}
  absl::StatusOr<JobPlan> Plan(const JobSpec& spec) override;

 private:
  const int64_t num_records_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TESTING_FAKE_PLANNER_H_
