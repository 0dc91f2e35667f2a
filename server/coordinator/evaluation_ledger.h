#ifndef PSTRAIN_SERVER_COORDINATOR_EVALUATION_LEDGER_H_
#define PSTRAIN_SERVER_COORDINATOR_EVALUATION_LEDGER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pstrain {
namespace coordinator {

// What the evaluator reported about a job's checkpoints: the metrics of
// each evaluated one, which it took up at all (evaluated, skipped or found
// unevaluable), which it cannot evaluate and why, and whether a continuous
// evaluation is done. Thread-safe.
class EvaluationLedger {
 public:
  using Metrics = std::map<std::string, double>;

  EvaluationLedger() = default;

  EvaluationLedger(const EvaluationLedger&) = delete;
  EvaluationLedger& operator=(const EvaluationLedger&) = delete;

  // The evaluator took checkpoint `step` up.
  void Account(int64_t step);
  void RecordMetrics(int64_t step, Metrics metrics);
  // It cannot evaluate checkpoint `step`, for `why`.
  void MarkUnevaluable(int64_t step, std::string why);
  // A continuous evaluation is over, for `why`.
  void MarkEvaluatorDone(std::string why);

  bool Evaluated(int64_t step) const;
  std::optional<std::string> WhyUnevaluable(int64_t step) const;
  std::optional<std::string> evaluator_done() const;
  // Metrics of each evaluated checkpoint still kept, by step.
  std::map<int64_t, Metrics> AllMetrics() const;

  // Checkpoint `step` was deleted (max_to_keep): its metrics go. Returns
  // whether the evaluator never took it up.
  bool Forget(int64_t step);

 private:
  mutable absl::Mutex mu_;
  std::map<int64_t, Metrics> metrics_ ABSL_GUARDED_BY(mu_);
  std::set<int64_t> accounted_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::string> unevaluable_ ABSL_GUARDED_BY(mu_);
  std::optional<std::string> evaluator_done_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_EVALUATION_LEDGER_H_
