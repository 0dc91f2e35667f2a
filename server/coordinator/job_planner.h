#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_PLANNER_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_PLANNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protos/job.pb.h"
#include "protos/parameter_server.pb.h"

namespace pstrain {
namespace coordinator {

// What the coordinator must know of a job's model and data before it can
// run it.
struct JobPlan {
  // Every variable of the model, in the model's order.
  std::vector<VariableSpec> variables;
  // Records of the training data, which data leases divide; 0 for the
  // evaluation-only modes.
  int64_t num_records = 0;
  // Records per shuffle window of training data streamed from files
  // (EpochOrder::Blocked), to align leases with; 0 for data in memory.
  int64_t records_per_window = 0;
  // For logs: "mlp on 60000 examples, 784 dense (28x28x1), 10 classes".
  std::string description;
};

// Works out a job's plan from its spec. Implementations are thread-safe.
class JobPlanner {
 public:
  virtual ~JobPlanner() = default;

  // `spec` as PrepareJobSpec filled it. Errors name what is wrong with the
  // spec or its data (InvalidArgument, NotFound), so they can end the job
  // with a reason a person can act on.
  virtual absl::StatusOr<JobPlan> Plan(const JobSpec& spec) = 0;
};

// The planner of the real system: opens the job's training data (the
// evaluation data in the evaluation-only modes) to count its records and
// learn its dimensions, and builds the model from the spec and those
// dimensions to list its variables, the same way workers and the evaluator
// build it. Sets up a compute context on the calling thread.
class ModelJobPlanner final : public JobPlanner {
 public:
  absl::StatusOr<JobPlan> Plan(const JobSpec& spec) override;
};

// What a submit checks of a job's data without reading it, so that it
// answers at once: the files of each data source the job reads (train_data
// when it trains, eval_data when it evaluates) are there. Reading them,
// and every check that needs their contents, is the plan's, in the job's
// first phase. NotFound: "train_data: no file matches /data/x*.csv", as
// the readers word it.
absl::Status CheckDataFilesExist(const JobSpec& spec);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_PLANNER_H_
