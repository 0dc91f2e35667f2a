#include "common/training/local_trainer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config/job_mode.h"
#include "common/config/job_spec_defaults.h"
#include "common/data/batch_reader.h"
#include "common/data/data_source.h"
#include "common/evaluation/evaluation_pass.h"
#include "common/model/job_model.h"
#include "common/model/label_fit.h"
#include "common/optimizer/gradient_clipping.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"

namespace pstrain {
absl::StatusOr<std::unique_ptr<LocalTrainer>> LocalTrainer::Create(const JobSpec& spec,
                                                                   LocalTrainerOptions options) {
  if (!JobModeTrains(spec.mode())) {
    return absl::UnimplementedError(
        "train-local trains; the evaluation-only modes need a checkpoint");
  }
  if (!spec.has_train_data()) return absl::InvalidArgumentError("train_data is required");
  if (!options.now) options.now = [] { return absl::Now(); };
  std::unique_ptr<LocalTrainer> trainer(new LocalTrainer(spec, std::move(options)));

  ASSIGN_OR_RETURN(trainer->train_source_, OpenExampleSource(spec.train_data(), PassMode::kTrain));
  if (spec.has_eval_data() && JobModeEvaluates(spec.mode())) {
    ASSIGN_OR_RETURN(trainer->eval_source_, OpenExampleSource(spec.eval_data(), PassMode::kEval));
  }
  ASSIGN_OR_RETURN(JobModel model, CreateJobModel(spec, trainer->train_source_->info()));
  if (trainer->eval_source_ != nullptr) {
    RETURN_IF_ERROR(CheckLabelsFit(*model.model, trainer->eval_source_->info(), "eval_data"));
  }
  trainer->compute_ = std::move(model.compute);
  trainer->model_ = std::move(model.model);
  ASSIGN_OR_RETURN(trainer->optimizer_, Optimizer::Create(spec.optimizer()));
  ASSIGN_OR_RETURN(LearningRate learning_rate, LearningRate::Create(spec.optimizer()));
  trainer->learning_rate_ = std::make_unique<LearningRate>(learning_rate);
  ASSIGN_OR_RETURN(trainer->variables_,
                   VariableStore::Create(trainer->model_->Variables(), spec.training().seed(),
                                         trainer->optimizer_.get()));
  JobSpec stops = spec;
  if (trainer->options_.max_steps > 0) {
    stops.mutable_stop()->set_max_steps(trainer->options_.max_steps);
  }
  trainer->stop_ = std::make_unique<StopConditions>(stops, trainer->training_clock_,
                                                    trainer->training_clock_.Now());
  LOG(INFO) << "train-local: " << trainer->model_->name() << " on "
            << trainer->train_source_->info().DebugString() << ", optimizer "
            << trainer->optimizer_->name();
  return trainer;
}

LocalTrainer::LocalTrainer(const JobSpec& spec, LocalTrainerOptions options)
    : spec_(spec), options_(std::move(options)), compute_thread_(std::this_thread::get_id()) {}

absl::Status LocalTrainer::CheckThread() const {
  if (std::this_thread::get_id() != compute_thread_) {
    return absl::FailedPreconditionError("LocalTrainer used off the thread that created it");
  }
  return absl::OkStatus();
}

void LocalTrainer::Stop(StopReason reason, std::string message) {
  stop_->Decide(reason, std::move(message), global_step_);
}

double LocalTrainer::TrainSeconds() const { return absl::ToDoubleSeconds(train_time_); }

absl::StatusOr<EvaluationResult> LocalTrainer::Evaluate() {
  RETURN_IF_ERROR(CheckThread());
  if (eval_source_ == nullptr) return absl::FailedPreconditionError("the job has no eval_data");
  ASSIGN_OR_RETURN(EvaluationPassResult pass,
                   RunEvaluationPass(spec_, *model_, *eval_source_,
                                     [this](const RowIds& rows, ParameterView* view) {
                                       return variables_->PrepareView(rows, view);
                                     }));
  EvaluationResult result;
  result.global_step = global_step_;
  result.train_seconds = TrainSeconds();
  result.metrics = std::move(pass.metrics);
  if (options_.on_evaluation) options_.on_evaluation(result);
  return result;
}

namespace {

// Loss and speed over the steps since the last progress report.
struct LoopTotals {
  double loss = 0;
  int64_t steps = 0;
  int64_t examples = 0;
  absl::Duration time;

  void Add(double step_loss, int64_t batch_examples, absl::Duration step_time) {
    loss += step_loss;
    ++steps;
    examples += batch_examples;
    time += step_time;
  }
  double mean_loss() const { return loss / static_cast<double>(steps); }
  double examples_per_sec() const {
    return static_cast<double>(examples) / std::max(1e-9, absl::ToDoubleSeconds(time));
  }
};

}  // namespace

absl::StatusOr<std::optional<StopDecision>> LocalTrainer::EvaluateForStop() {
  const StopSpec& stop = spec_.stop();
  const bool stops_on_evaluations =
      stop.has_target_metric_value() || stop.early_stopping_patience() > 0;
  if (options_.eval_every_steps <= 0 || eval_source_ == nullptr ||
      global_step_ % options_.eval_every_steps != 0 || !stops_on_evaluations) {
    return std::nullopt;
  }
  ASSIGN_OR_RETURN(EvaluationResult evaluation, Evaluate());
  ASSIGN_OR_RETURN(const EvalOutcome outcome, stop_->OnEval(global_step_, evaluation.metrics));
  return outcome.stop;
}

void LocalTrainer::DecideEndOfData() {
  const int epochs = spec_.train_data().epochs();
  const std::string what =
      absl::StrCat("trained on every record of ", epochs, epochs == 1 ? " epoch" : " epochs");
  stop_->Decide(STOP_REASON_END_OF_DATA, what, global_step_);
}

absl::StatusOr<LocalTrainingResult> LocalTrainer::Run() {
  RETURN_IF_ERROR(CheckThread());
  const int64_t steps_per_loop = StepsPerLoopOf(spec_.training());
  const double clip_norm = spec_.optimizer().clip_norm();

  ASSIGN_OR_RETURN(
      std::unique_ptr<BatchReader> reader,
      BatchReader::Create(train_source_.get(),
                          BatchReaderOptionsFromSpec(spec_.train_data(), PassMode::kTrain)));
  LocalTrainingResult result;
  ParameterView view;
  ModelOutput output;
  Gradients gradients;
  LoopTotals loop;
  while (true) {
    // max_steps and max_seconds.
    if (stop_->OnProgress(global_step_, std::nullopt).has_value()) break;
    const absl::Time start = options_.now();
    absl::StatusOr<ExampleBatch> batch = reader->Next();
    if (absl::IsOutOfRange(batch.status())) {
      DecideEndOfData();
      break;
    }
    if (!batch.ok()) return batch.status();
    ASSIGN_OR_RETURN(RowIds rows, model_->RowsToRead(*batch));
    RETURN_IF_ERROR(variables_->PrepareView(rows, &view));
    RETURN_IF_ERROR(model_->ComputeGradients(view, *batch, &output, &gradients));
    const int64_t batch_size = batch->size, batch_epoch = batch->epoch;
    reader->Recycle(*std::move(batch));  // its storage holds a later batch
    // A NaN or infinite loss, unless the spec trains on through it.
    if (std::optional<StopDecision> diverged = stop_->OnProgress(global_step_, output.loss)) {
      LOG(WARNING) << "train-local: " << diverged->message;
      break;
    }
    // As a worker clips its gradients before its pushes. Non-finite ones
    // are applied unscaled: the next step's loss then stops the job.
    ClipByGlobalNorm(clip_norm, &gradients);
    UpdateStep update;
    update.learning_rate = static_cast<float>(learning_rate_->At(global_step_));
    update.t = global_step_ + 1;
    RETURN_IF_ERROR(variables_->Apply(gradients, update));
    ++global_step_;
    const absl::Duration step_time = options_.now() - start;
    train_time_ += step_time;
    result.examples += batch_size;
    loop.Add(output.loss, batch_size, step_time);
    if (loop.steps == steps_per_loop) {
      result.final_loss = loop.mean_loss();
      if (options_.on_progress) {
        TrainingProgress progress;
        progress.global_step = global_step_;
        progress.epoch = batch_epoch;
        progress.loss = result.final_loss;
        progress.examples_per_sec = loop.examples_per_sec();
        progress.learning_rate = update.learning_rate;
        options_.on_progress(progress);
      }
      loop = LoopTotals();
    }
    ASSIGN_OR_RETURN(const std::optional<StopDecision> evaluated, EvaluateForStop());
    if (evaluated.has_value()) break;
  }
  // Every way out of the loop decided the stop.
  const StopDecision decided = stop_->decision().value_or(StopDecision());
  result.stop_reason = decided.reason;
  result.stop_message = decided.message;
  if (loop.steps > 0) result.final_loss = loop.mean_loss();
  result.global_step = global_step_;
  result.train_seconds = TrainSeconds();
  result.examples_per_sec = result.examples / std::max(1e-9, result.train_seconds);
  if (eval_source_ != nullptr) {
    ASSIGN_OR_RETURN(EvaluationResult evaluation, Evaluate());
    result.eval_metrics = std::move(evaluation.metrics);
  }
  return result;
}

}  // namespace pstrain
