#ifndef PSTRAIN_COMMON_TRAINING_LOCAL_TRAINER_H_
#define PSTRAIN_COMMON_TRAINING_LOCAL_TRAINER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/data/example_source.h"
#include "common/job/stop_conditions.h"
#include "common/model/dnnl/compute_context.h"
#include "common/model/model.h"
#include "common/optimizer/learning_rate.h"
#include "common/optimizer/optimizer.h"
#include "common/training/variable_store.h"
#include "protos/job.pb.h"

namespace pstrain {

// Progress of a training run, reported every training.steps_per_loop steps.
struct TrainingProgress {
  int64_t global_step = 0;
  int64_t epoch = 0;
  double loss = 0;              // mean training loss over the last loop
  double examples_per_sec = 0;  // over the last loop
  double learning_rate = 0;
};

// One evaluation during or after training.
struct EvaluationResult {
  int64_t global_step = 0;
  double train_seconds = 0;  // training time so far, evaluations excluded
  std::map<std::string, double> metrics;
};

struct LocalTrainerOptions {
  // Replaces stop.max_steps when > 0. Default 0 (the spec's).
  int64_t max_steps = 0;
  // Evaluate on eval_data every this many steps during training as well as
  // at the end, when the job stops on its evaluations
  // (stop.target_metric_value or early_stopping_patience); what those are
  // checked against. Default 0: only at the end.
  int64_t eval_every_steps = 0;
  // The clock for throughput and max_seconds. Default absl::Now.
  std::function<absl::Time()> now;
  // Called with each progress report and each evaluation; may be empty.
  std::function<void(const TrainingProgress&)> on_progress;
  std::function<void(const EvaluationResult&)> on_evaluation;
};

// What a run did.
struct LocalTrainingResult {
  int64_t global_step = 0;
  int64_t examples = 0;         // training examples processed
  double train_seconds = 0;     // training time, evaluations excluded
  double examples_per_sec = 0;  // examples / train_seconds
  double final_loss = 0;        // mean training loss of the last loop
  StopReason stop_reason = STOP_REASON_UNSPECIFIED;
  // Why, for a person: "reached max_steps 3000", "loss is NaN at step 12".
  std::string stop_message;
  // The final evaluation on eval_data; empty in JOB_MODE_TRAIN.
  std::map<std::string, double> eval_metrics;
};

// Trains a job's model in this process: the job's data, model, optimizer
// and learning-rate schedule, with variables held locally instead of on
// parameter servers, then evaluates on the job's eval_data. It is the
// correctness oracle and the compute baseline of the distributed system: its
// initial values, update rules, schedule and clipping are the shards' own
// (common/optimizer/), and it stops by the coordinator's stop conditions
// (common/job/stop_conditions.h), with max_seconds counting training time
// only: a cluster's evaluator runs beside training, not in between.
//
// Compute runs on the thread that called Create (its oneDNN context and
// denormal flushing are set up there): call Run, Train and Evaluate on that
// thread. Not thread-safe.
class LocalTrainer {
 public:
  // `spec` as PrepareJobSpec returns it (defaults filled). Loads the data,
  // builds the model and initialises the variables.
  // InvalidArgument: no train_data, or a spec the model, optimizer or
  // metrics refuse. Unimplemented: the evaluation-only modes, which need a
  // checkpoint. The data readers' errors (NotFound, InvalidArgument).
  static absl::StatusOr<std::unique_ptr<LocalTrainer>> Create(const JobSpec& spec,
                                                              LocalTrainerOptions options);

  LocalTrainer(const LocalTrainer&) = delete;
  LocalTrainer& operator=(const LocalTrainer&) = delete;

  // Trains until a stop condition (max steps, max seconds, end of the
  // train data's epochs, a NaN loss, the target metric, early stopping),
  // then evaluates.
  absl::StatusOr<LocalTrainingResult> Run();

  // Ends training before its next step with `reason`, decided outside the
  // trainer (as train-local's checkpoints failing too often in a row), unless
  // a stop was decided before; Run returns the decision that stands. For the
  // progress and evaluation callbacks, which run inside Run.
  void Stop(StopReason reason, std::string message);

  // Evaluates the current variables on eval_data (eval.steps batches, or
  // all). FailedPrecondition: the job has no eval_data.
  absl::StatusOr<EvaluationResult> Evaluate();

  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  const VariableStore& variables() const { return *variables_; }
  const DatasetInfo& train_info() const { return train_source_->info(); }
  int64_t global_step() const { return global_step_; }

 private:
  LocalTrainer(const JobSpec& spec, LocalTrainerOptions options);
  absl::Status CheckThread() const;
  double TrainSeconds() const;
  // Evaluates when eval_every_steps says so and the job stops on its
  // evaluations; the stop decision that stands then, if any.
  absl::StatusOr<std::optional<StopDecision>> EvaluateForStop();
  // The train data's epochs are over: decides the stop.
  void DecideEndOfData();

  // Time as the stop conditions read it: the training time so far, so that
  // evaluations, which a cluster runs beside training, do not count
  // towards max_seconds. Nothing waits on it.
  class TrainingClock : public Clock {
   public:
    explicit TrainingClock(const absl::Duration& trained) : trained_(trained) {}
    absl::Time Now() override { return absl::UnixEpoch() + trained_; }
    bool AwaitWithDeadline(absl::Mutex*, const absl::Condition& cond, absl::Time) override {
      return cond.Eval();
    }

   private:
    const absl::Duration& trained_;
  };

  const JobSpec spec_;
  LocalTrainerOptions options_;
  const std::thread::id compute_thread_;

  std::unique_ptr<ComputeContext> compute_;
  std::unique_ptr<ExampleSource> train_source_;
  std::unique_ptr<ExampleSource> eval_source_;  // null without eval_data
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<LearningRate> learning_rate_;
  std::unique_ptr<VariableStore> variables_;

  int64_t global_step_ = 0;
  absl::Duration train_time_;
  TrainingClock training_clock_{train_time_};
  std::unique_ptr<StopConditions> stop_;
};

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_TRAINING_LOCAL_TRAINER_H_
