#include "client/train_local_command.h"

#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/exit_code.h"
#include "client/job_spec_file.h"
#include "client/local_run_recorder.h"
#include "client/output_options.h"
#include "common/checkpoint/posix_env.h"
#include "common/clock/clock.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/training/local_trainer.h"
#include "gflags/gflags.h"

DEFINE_int64(max_steps, 0, "train-local: stop after this many steps (0: the job spec's)");

namespace pstrain {
namespace {

// Whether the run failed although training ended: its checkpoints failed too
// often in a row, or its loss diverged (LocalTrainer logged that).
bool EndedFailed(const LocalTrainingResult& result) {
  return result.stop_reason == STOP_REASON_NAN_LOSS ||
         result.stop_reason == STOP_REASON_CHECKPOINT_FAILURES;
}

// A finite number as JSON, or null (JSON has no NaN or infinity).
std::string JsonNumber(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.10g", value) : "null";
}

std::string Json(const LocalTrainingResult& result, const RecordedRun& recorded) {
  std::map<std::string, std::string> fields = {
      {"examples_per_sec", JsonNumber(result.examples_per_sec)},
      {"state", absl::StrCat("\"", EndedFailed(result) ? "FAILED" : "SUCCEEDED", "\"")},
      {"global_step", absl::StrCat(result.global_step)},
      {"examples", absl::StrCat(result.examples)},
      {"train_seconds", JsonNumber(result.train_seconds)},
      {"final_train_loss", JsonNumber(result.final_loss)},
      {"stop_reason", absl::StrCat("\"", StopReason_Name(result.stop_reason), "\"")},
  };
  // Metric names are plain identifiers (the known list), safe to quote as
  // they are; they may replace nothing above.
  for (const auto& [name, value] : result.eval_metrics) fields[name] = JsonNumber(value);
  if (!result.stop_message.empty()) {
    fields["reason"] = absl::StrCat("\"", absl::CEscape(result.stop_message), "\"");
  }
  if (!recorded.checkpoint_dir.empty()) {
    fields["checkpoint"] = absl::StrCat("\"", absl::CEscape(recorded.checkpoint_dir), "\"");
  }
  if (!recorded.export_dirs.empty()) {
    fields["export_path"] = absl::StrCat("\"", absl::CEscape(recorded.export_dirs.front()), "\"");
  }
  return absl::StrCat("{",
                      absl::StrJoin(fields, ", ",
                                    [](std::string* out, const auto& field) {
                                      absl::StrAppend(out, "\"", field.first, "\": ", field.second);
                                    }),
                      "}");
}

void PrintText(const LocalTrainingResult& result, const RecordedRun& recorded) {
  std::cout << absl::StrFormat(
      "trained %d steps (%d examples) in %.2f s: %.0f examples/s; stopped: %s\n",
      result.global_step, result.examples, result.train_seconds, result.examples_per_sec,
      StopReason_Name(result.stop_reason));
  std::cout << absl::StrFormat("final training loss %.6g\n", result.final_loss);
  for (const auto& [name, value] : result.eval_metrics) {
    std::cout << absl::StrFormat("eval %s %.6g\n", name, value);
  }
  if (!recorded.checkpoint_dir.empty()) {
    std::cout << "checkpoint: " << recorded.checkpoint_dir << "\n";
  }
  for (const std::string& dir : recorded.export_dirs)
    std::cout << "exported model: " << dir << "\n";
}

// The job spec of `args` with --max_steps and --model_dir applied, as
// PrepareJobSpec fills it; nullopt, once it printed why, on a usage error.
std::optional<JobSpec> SpecOfArgs(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain train-local: expected one argument, the job spec file (.pbtxt or "
                 ".json); got "
              << args.size() << "\n";
    return std::nullopt;
  }
  if (FLAGS_max_steps < 0) {
    std::cerr << "pstrain train-local: --max_steps must be >= 0\n";
    return std::nullopt;
  }
  absl::StatusOr<JobSpec> raw = LoadJobSpecFile(args[0]);
  if (!raw.ok()) {
    std::cerr << "pstrain train-local: " << raw.status().message() << "\n";
    return std::nullopt;
  }
  // Before validation: a spec with no stop condition of its own is valid
  // once --max_steps gives one, and the export folder's default follows
  // --model_dir.
  if (FLAGS_max_steps > 0) raw->mutable_stop()->set_max_steps(FLAGS_max_steps);
  ApplyModelDirFlag(*raw);
  absl::StatusOr<JobSpec> spec = PrepareJobSpec(*std::move(raw));
  if (!spec.ok()) {
    std::cerr << "pstrain train-local: " << args[0] << ": " << spec.status().message() << "\n";
    return std::nullopt;
  }
  return *std::move(spec);
}

}  // namespace

int RunTrainLocalCommand(const std::vector<std::string>& args) {
  PosixEnv env;
  return RunTrainLocalCommandWithEnv(args, env);
}

int RunTrainLocalCommandWithEnv(const std::vector<std::string>& args, Env& env) {
  absl::StatusOr<OutputOptions> output = OutputOptionsFromFlags();
  if (!output.ok()) {
    std::cerr << "pstrain train-local: " << output.status().message() << "\n";
    return kExitUsage;
  }
  const std::optional<JobSpec> spec = SpecOfArgs(args);
  if (!spec.has_value()) return kExitUsage;
  RealClock clock;
  std::unique_ptr<LocalRunRecorder> recorder;
  if (!ModelDirFlag().empty()) {
    absl::StatusOr<std::unique_ptr<LocalRunRecorder>> opened = LocalRunRecorder::Open(
        env, clock, *spec, [](const std::string& line) { std::cerr << "warning: " << line << "\n"; });
    if (!opened.ok()) {
      std::cerr << "pstrain train-local: " << opened.status().message() << "\n";
      return ExitCodeForStatus(opened.status());
    }
    recorder = *std::move(opened);
  }
  // The progress callback runs inside Run, on this thread; it checkpoints
  // the trainer it is handed once Create has made it, and stops it as the
  // coordinator stops a job whose checkpoints failed too often in a row.
  LocalTrainer* running = nullptr;
  LocalTrainerOptions options;
  options.on_progress = [&](const TrainingProgress& p) {
    std::cerr << absl::StrFormat("step %d  epoch %d  loss %.4f  %.0f examples/s  lr %.3g\n",
                                 p.global_step, p.epoch, p.loss, p.examples_per_sec,
                                 p.learning_rate);
    if (recorder == nullptr) return;
    if (std::optional<std::string> too_many = recorder->OnProgress(p, *running)) {
      running->Stop(STOP_REASON_CHECKPOINT_FAILURES, *std::move(too_many));
    }
  };
  absl::StatusOr<std::unique_ptr<LocalTrainer>> trainer = LocalTrainer::Create(*spec, options);
  if (!trainer.ok()) {
    std::cerr << "pstrain train-local: " << trainer.status().message() << "\n";
    return 1;
  }
  running = trainer->get();
  absl::StatusOr<LocalTrainingResult> result = (*trainer)->Run();
  if (!result.ok()) {
    std::cerr << "pstrain train-local: " << result.status().message() << "\n";
    return 1;
  }
  const bool failed = EndedFailed(*result);
  RecordedRun recorded;
  if (recorder != nullptr && !failed) {
    absl::StatusOr<RecordedRun> finished = recorder->Finish(**trainer, *result);
    if (!finished.ok()) {
      std::cerr << "pstrain train-local: cannot keep the run in "
                << spec->checkpoint().model_dir() << ": " << finished.status().message() << "\n";
      return 1;
    }
    recorded = *std::move(finished);
  }
  if (output->format == OutputFormat::kJson) {
    std::cout << Json(*result, recorded) << std::endl;
  } else {
    PrintText(*result, recorded);
  }
  if (result->stop_reason == STOP_REASON_CHECKPOINT_FAILURES) {
    const std::string last = recorder->LastSaved();
    std::cerr << "pstrain train-local: failed: " << result->stop_message << "; "
              << (last.empty() ? "no checkpoint was saved"
                               : absl::StrCat("the last checkpoint saved: ", last))
              << "\n";
  }
  return failed ? 1 : 0;
}

Subcommand TrainLocalCommand() {
  return {"train-local",
          "JOB.pbtxt",
          "train a job in this one process (no cluster), evaluate it, print the metrics",
          "Trains the job's model in this process on its train_data, evaluates it on its\n"
          "eval_data and prints the metrics: a quick check of a spec and a model before a\n"
          "cluster run. Progress goes to stderr. With --output=json stdout holds one JSON\n"
          "object (state, global_step, examples_per_sec, each eval metric by name, and\n"
          "with --model_dir the final checkpoint and export_path).\n"
          "With --model_dir=DIR the run is kept as a cluster job keeps it: summaries in\n"
          "DIR/train and DIR/eval, checkpoints DIR/ckpt-<step> (every checkpoint.every_steps\n"
          "or every_seconds, and at the end) and the export under DIR/export, so `pstrain\n"
          "report`, `export` and `predict` take it. DIR must hold no checkpoint yet: the\n"
          "run starts from scratch. A checkpoint that cannot be saved is a warning and is\n"
          "tried again when next due; checkpoint.max_consecutive_failures of them in a row\n"
          "fail the run, as they fail a cluster job.\n"
          "Exit codes: 0 trained, 1 the loss diverged, checkpoints failed or training\n"
          "failed, 2 bad usage or an invalid spec.\n"
          "\n"
          "Example:\n"
          "  pstrain train-local examples/fashion_mnist_mlp.pbtxt --max_steps=500 --output=json\n"
          "  pstrain train-local examples/fashion_mnist_mlp.pbtxt --model_dir=/tmp/fmnist_local",
          {"output", "max_steps", "model_dir"},
          RunTrainLocalCommand};
}

}  // namespace pstrain
