#ifndef PSTRAIN_COMMON_EVALUATION_EVALUATION_PASS_H_
#define PSTRAIN_COMMON_EVALUATION_EVALUATION_PASS_H_

// One evaluation of a job's model on its evaluation data, written once for
// the evaluator and the single-process trainer so that the two agree
// exactly: eval_data's batches in their order (BatchReaderOptionsFromSpec,
// one epoch), eval.steps of them (all when 0), and eval.metrics ("loss"
// when none) with eval.top_k.

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/data/example_source.h"
#include "common/model/model.h"
#include "common/model/parameters.h"
#include "protos/job.pb.h"

namespace pstrain {

struct EvaluationPassResult {
  std::map<std::string, double> metrics;
  int64_t examples = 0;
  int64_t batches = 0;
};

// Reads the parameters a batch needs (its embedding rows, every dense
// variable) into `view`: VariableStore::PrepareView in the trainer,
// ModelParameters::PrepareView in the evaluator.
using PrepareParameterView = std::function<absl::Status(const RowIds& rows, ParameterView* view)>;

// Runs `model` in evaluation mode over `source`, which must outlive the
// call, as `spec` says. Errors: an unknown metric (InvalidArgument),
// parameters that do not fit the model, the data's and the model's.
absl::StatusOr<EvaluationPassResult> RunEvaluationPass(const JobSpec& spec, Model& model,
                                                       const ExampleSource& source,
                                                       const PrepareParameterView& prepare_view);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_EVALUATION_EVALUATION_PASS_H_
