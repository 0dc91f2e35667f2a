#include "server/coordinator/evaluation_ledger.h"

#include <utility>

namespace pstrain {
namespace coordinator {

void EvaluationLedger::Account(int64_t step) {
  absl::MutexLock lock(&mu_);
  accounted_.insert(step);
}

void EvaluationLedger::RecordMetrics(int64_t step, Metrics metrics) {
  absl::MutexLock lock(&mu_);
  accounted_.insert(step);
  metrics_[step] = std::move(metrics);
}

void EvaluationLedger::MarkUnevaluable(int64_t step, std::string why) {
  absl::MutexLock lock(&mu_);
  accounted_.insert(step);
  unevaluable_[step] = std::move(why);
}

void EvaluationLedger::MarkEvaluatorDone(std::string why) {
  absl::MutexLock lock(&mu_);
  evaluator_done_ = std::move(why);
}

bool EvaluationLedger::Evaluated(int64_t step) const {
  absl::MutexLock lock(&mu_);
  return metrics_.count(step) > 0;
}

std::optional<std::string> EvaluationLedger::WhyUnevaluable(int64_t step) const {
  absl::MutexLock lock(&mu_);
  auto it = unevaluable_.find(step);
  if (it == unevaluable_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> EvaluationLedger::evaluator_done() const {
  absl::MutexLock lock(&mu_);
  return evaluator_done_;
}

std::map<int64_t, EvaluationLedger::Metrics> EvaluationLedger::AllMetrics() const {
  absl::MutexLock lock(&mu_);
  return metrics_;
}

bool EvaluationLedger::Forget(int64_t step) {
  absl::MutexLock lock(&mu_);
  metrics_.erase(step);
  return accounted_.count(step) == 0;
}

}  // namespace coordinator
}  // namespace pstrain
