#include "client/train_local_command.h"

#include <cmath>
#include <iostream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/exit_code.h"
#include "client/output_options.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/training/local_trainer.h"
#include "gflags/gflags.h"

DEFINE_int64(max_steps, 0, "train-local: stop after this many steps (0: the job spec's)");

namespace pstrain {
namespace {

// A finite number as JSON, or null (JSON has no NaN or infinity).
std::string JsonNumber(double value) {
  return std::isfinite(value) ? absl::StrFormat("%.10g", value) : "null";
}

std::string Json(const LocalTrainingResult& result) {
  std::map<std::string, std::string> fields = {
      {"examples_per_sec", JsonNumber(result.examples_per_sec)},
      {"state", absl::StrCat("\"", result.stop_reason == STOP_REASON_NAN_LOSS ? "FAILED" : "SUCCEEDED", "\"")},
      {"global_step", absl::StrCat(result.global_step)},
      {"examples", absl::StrCat(result.examples)},
      {"train_seconds", JsonNumber(result.train_seconds)},
      {"final_train_loss", JsonNumber(result.final_loss)},
      {"stop_reason", absl::StrCat("\"", StopReason_Name(result.stop_reason), "\"")},
  };
  // Metric names are plain identifiers (the known list), safe to quote as
  // they are; they may replace nothing above.
  for (const auto& [name, value] : result.eval_metrics) fields[name] = JsonNumber(value);
  return absl::StrCat("{",
                      absl::StrJoin(fields, ", ",
                                    [](std::string* out, const auto& field) {
                                      absl::StrAppend(out, "\"", field.first, "\": ", field.second);
                                    }),
                      "}");
}

void PrintText(const LocalTrainingResult& result) {
  std::cout << absl::StrFormat(
      "trained %d steps (%d examples) in %.2f s: %.0f examples/s; stopped: %s\n",
      result.global_step, result.examples, result.train_seconds, result.examples_per_sec,
      StopReason_Name(result.stop_reason));
  std::cout << absl::StrFormat("final training loss %.6g\n", result.final_loss);
  for (const auto& [name, value] : result.eval_metrics) {
    std::cout << absl::StrFormat("eval %s %.6g\n", name, value);
  }
}

}  // namespace

int RunTrainLocalCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain train-local: expected one argument, the job spec file (.pbtxt or "
                 ".json); got "
              << args.size() << "\n";
    return 2;
  }
  absl::StatusOr<OutputOptions> output = OutputOptionsFromFlags();
  if (!output.ok()) {
    std::cerr << "pstrain train-local: " << output.status().message() << "\n";
    return kExitUsage;
  }
  if (FLAGS_max_steps < 0) {
    std::cerr << "pstrain train-local: --max_steps must be >= 0\n";
    return kExitUsage;
  }
  absl::StatusOr<JobSpec> raw = LoadJobSpecFile(args[0]);
  if (!raw.ok()) {
    std::cerr << "pstrain train-local: " << raw.status().message() << "\n";
    return kExitUsage;
  }
  // Before validation: a spec with no stop condition of its own is valid
  // once --max_steps gives one.
  if (FLAGS_max_steps > 0) raw->mutable_stop()->set_max_steps(FLAGS_max_steps);
  absl::StatusOr<JobSpec> spec = PrepareJobSpec(*std::move(raw));
  if (!spec.ok()) {
    std::cerr << "pstrain train-local: " << args[0] << ": " << spec.status().message() << "\n";
    return kExitUsage;
  }
  LocalTrainerOptions options;
  options.on_progress = [](const TrainingProgress& p) {
    std::cerr << absl::StrFormat("step %d  epoch %d  loss %.4f  %.0f examples/s  lr %.3g\n",
                                 p.global_step, p.epoch, p.loss, p.examples_per_sec,
                                 p.learning_rate);
  };
  absl::StatusOr<std::unique_ptr<LocalTrainer>> trainer = LocalTrainer::Create(*spec, options);
  if (!trainer.ok()) {
    std::cerr << "pstrain train-local: " << trainer.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<LocalTrainingResult> result = (*trainer)->Run();
  if (!result.ok()) {
    std::cerr << "pstrain train-local: " << result.status().message() << "\n";
    return 1;
  }
  if (output->format == OutputFormat::kJson) {
    std::cout << Json(*result) << std::endl;
  } else {
    PrintText(*result);
  }
  return result->stop_reason == STOP_REASON_NAN_LOSS ? 1 : 0;
}

Subcommand TrainLocalCommand() {
  return {"train-local",
          "JOB.pbtxt",
          "train a job in this one process (no cluster), evaluate it, print the metrics",
          "Trains the job's model in this process on its train_data, evaluates it on its\n"
          "eval_data and prints the metrics: a quick check of a spec and a model before a\n"
          "cluster run. Progress goes to stderr. With --output=json stdout holds one JSON\n"
          "object (state, global_step, examples_per_sec, each eval metric by name).\n"
          "Exit codes: 0 trained, 1 the loss diverged or training failed, 2 bad usage or an\n"
          "invalid spec.\n"
          "\n"
          "Example:\n"
          "  pstrain train-local examples/fashion_mnist_mlp.pbtxt --max_steps=500 --output=json",
          {"output", "max_steps"},
          RunTrainLocalCommand};
}

}  // namespace pstrain
