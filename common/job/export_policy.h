#ifndef PSTRAIN_COMMON_JOB_EXPORT_POLICY_H_
#define PSTRAIN_COMMON_JOB_EXPORT_POLICY_H_

#include <map>
#include <optional>
#include <string>

#include "common/job/checkpoint_kind.h"
#include "protos/job.pb.h"

namespace pstrain {

// The exports one evaluated checkpoint calls for.
struct ExportChoice {
  bool best = false;   // under <export_dir>/best
  bool final = false;  // under <export_dir>/final
};

// Which models a job exports, from its ExportSpec and EvalSpec, whoever
// trains it (the evaluator of a cluster, or train-local):
//
//   <export_dir>/best/<step>/    a checkpoint whose evaluation beat every
//                                earlier one strictly on eval.best_metric in
//                                its direction (strategy BEST)
//   <export_dir>/final/<step>/   the final checkpoint (strategies BEST and
//                                FINAL)
//
// Each folder keeps its newest exports_to_keep versions (0 keeps all). The
// best so far outlives a run: it is seeded from the newest export already
// under best/, so a job trained again into the same export_dir only exports
// what beats it. Thread-compatible.
class ExportPolicy {
 public:
  // `spec` with defaults filled (PrepareJobSpec).
  explicit ExportPolicy(const JobSpec& spec);

  // Whether `metrics` beat the best so far: the best metric is present and
  // not NaN, and strictly better in its direction (or there is no best yet).
  bool IsImprovement(const std::map<std::string, double>& metrics) const;

  // The exports an evaluation of a checkpoint of `kind` with `metrics`
  // calls for.
  ExportChoice Choose(const std::map<std::string, double>& metrics, CheckpointKind kind) const;

  // An export under best/ was written for `metrics`: they are the best so
  // far. Ignored when they lack the best metric or it is NaN.
  void RecordBest(const std::map<std::string, double>& metrics);

  ExportStrategy strategy() const { return strategy_; }
  const std::string& best_metric() const { return best_metric_; }
  // Versions kept in each of best/ and final/; 0 keeps all.
  int exports_to_keep() const { return exports_to_keep_; }
  const std::string& best_dir() const { return best_dir_; }
  const std::string& final_dir() const { return final_dir_; }
  std::optional<double> best_value() const { return best_value_; }

 private:
  const ExportStrategy strategy_;
  const std::string best_metric_;
  const MetricDirection direction_;
  const int exports_to_keep_;
  const std::string best_dir_;
  const std::string final_dir_;
  std::optional<double> best_value_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_JOB_EXPORT_POLICY_H_
