// Single-process training throughput on the real Fashion-MNIST, batch 128:
// examples/s of the MLP 784-256-128-10, of the same MLP defined in PyTorch
// and imported as its ONNX graph, and of the CNN, and the training time the
// MLP needs to reach 88% test accuracy.
//
//   bazel run -c opt //bench/compute:training_benchmark
//
// The imported MLP's graph is common/model/onnx/testdata/relu_mlp.onnx,
// relative to the repository's root or the runfiles (--onnx_mlp names
// another).
// Flags: --mlp_steps, --cnn_steps, --target_accuracy, --max_epochs, and
// --report=FILE to write the figures as this benchmark's section of
// bench/RESULTS.md.
//
// Each figure is given twice: by the wall clock, and by the compute
// thread's CPU time (the trainer's clock is injected), which does not count
// the time other processes on a shared machine take the core away.

#include <time.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/report/markdown_report.h"
#include "common/training/local_trainer.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "google/protobuf/text_format.h"

DEFINE_int64(mlp_steps, 1000, "training steps timed for the MLP's throughput");
DEFINE_int64(cnn_steps, 60, "training steps timed for the CNN's throughput");
DEFINE_double(target_accuracy, 0.88, "test accuracy the MLP trains to");
DEFINE_int32(max_epochs, 30, "give up on the target after this many epochs");
DEFINE_string(onnx_mlp, "common/model/onnx/testdata/relu_mlp.onnx",
              "the built-in MLP's shapes defined in PyTorch and exported to ONNX");
DEFINE_string(report, "", "write this run's section of bench/RESULTS.md here");

namespace pstrain {
namespace {

JobSpec Spec(const std::string& model, int64_t max_steps, int epochs) {
  JobSpec spec;
  CHECK(google::protobuf::TextFormat::ParseFromString(
      absl::StrCat(R"(
        mode: JOB_MODE_TRAIN_AND_EVAL
        model { )",
                   model, R"( }
        train_data { fashion_mnist { split: DATA_SPLIT_TRAIN } batch_size: 128 epochs: )",
                   epochs, R"( shuffle: true prefetch_batches: 2 }
        eval_data { fashion_mnist { split: DATA_SPLIT_TEST } batch_size: 1000 }
        optimizer { adam {} learning_rate: 0.001 }
        training { steps_per_loop: 100000 compute_threads: 1 seed: 1 }
        stop { max_steps: )",
                   max_steps, R"( }
        eval { metrics: ["loss", "accuracy"] best_metric: "accuracy" }
      )"),
      &spec));
  return spec;
}

// The calling thread's CPU time as a clock.
absl::Time ThreadCpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return absl::UnixEpoch() + absl::DurationFromTimespec(ts);
}

struct Runs {
  LocalTrainingResult wall, cpu;
};

// Trains twice from the same seed: once timed by the wall clock, once by
// the compute thread's CPU time.
Runs Train(const JobSpec& spec, LocalTrainerOptions options) {
  Runs runs;
  for (bool cpu : {false, true}) {
    if (cpu) options.now = ThreadCpuNow;
    auto trainer = LocalTrainer::Create(spec, options);
    CHECK(trainer.ok()) << trainer.status();
    auto result = (*trainer)->Run();
    CHECK(result.ok()) << result.status();
    (cpu ? runs.cpu : runs.wall) = *result;
  }
  return runs;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  using pstrain::Spec;
  const std::string mlp = "mlp { hidden_units: [256, 128] }";
  const std::string cnn = "cnn {}";
  const std::string onnx_mlp = absl::StrCat("onnx { path: \"", FLAGS_onnx_mlp, "\" }");

  const pstrain::Runs mlp_run = pstrain::Train(Spec(mlp, FLAGS_mlp_steps, 0), {});
  std::printf(
      "mlp 784-256-128-10  batch 128: %8.0f examples/s wall, %8.0f per CPU second (%lld "
      "steps)\n",
      mlp_run.wall.examples_per_sec, mlp_run.cpu.examples_per_sec,
      static_cast<long long>(mlp_run.wall.global_step));

  // The same MLP defined in PyTorch and imported as its ONNX graph.
  const pstrain::Runs onnx_run = pstrain::Train(Spec(onnx_mlp, FLAGS_mlp_steps, 0), {});
  const double onnx_ratio = onnx_run.cpu.examples_per_sec / mlp_run.cpu.examples_per_sec;
  std::printf(
      "onnx mlp (PyTorch)  batch 128: %8.0f examples/s wall, %8.0f per CPU second (%lld "
      "steps): %.2fx the built-in per CPU second\n",
      onnx_run.wall.examples_per_sec, onnx_run.cpu.examples_per_sec,
      static_cast<long long>(onnx_run.wall.global_step), onnx_ratio);

  const pstrain::Runs cnn_run = pstrain::Train(Spec(cnn, FLAGS_cnn_steps, 0), {});
  std::printf(
      "cnn 32-64-k5-128    batch 128: %8.0f examples/s wall, %8.0f per CPU second (%lld "
      "steps)\n",
      cnn_run.wall.examples_per_sec, cnn_run.cpu.examples_per_sec,
      static_cast<long long>(cnn_run.wall.global_step));

  pstrain::JobSpec target = Spec(mlp, 0, FLAGS_max_epochs);
  target.mutable_stop()->clear_max_steps();
  target.mutable_stop()->set_target_metric_value(FLAGS_target_accuracy);
  pstrain::LocalTrainerOptions options;
  options.eval_every_steps = 100;
  const pstrain::Runs target_run = pstrain::Train(target, options);
  std::printf(
      "mlp to %.0f%% test accuracy: %.2f s of training wall, %.2f s CPU (%lld steps, %.1f "
      "epochs, stopped: %s, accuracy %.4f)\n",
      FLAGS_target_accuracy * 100, target_run.wall.train_seconds, target_run.cpu.train_seconds,
      static_cast<long long>(target_run.wall.global_step), target_run.wall.global_step / 469.0,
      pstrain::StopReason_Name(target_run.wall.stop_reason).c_str(),
      target_run.wall.eval_metrics.at("accuracy"));
  const bool reached = target_run.wall.stop_reason == pstrain::STOP_REASON_TARGET_METRIC;

  pstrain::bench::MarkdownReport report("Single-process training");
  report.Paragraph(absl::StrFormat(
      "The trainer every worker runs, alone in one process on real Fashion-MNIST: batch 128, "
      "Adam at 0.001, shuffled, 2 batches prefetched on a second thread, one compute thread. "
      "Each figure twice: by the wall clock, and by the compute thread's CPU clock, which leaves "
      "out the time other processes held the core (what one quiet core gives). The time to %.0f%% "
      "test accuracy evaluates the 10,000 test images every 100 steps (evaluation not timed). "
      "The distributed runs in this file compare themselves with this trainer measured again "
      "in their own run.",
      FLAGS_target_accuracy * 100));
  report.Command(
      absl::StrFormat("bazel-bin/bench/compute/training_benchmark --mlp_steps=%d --cnn_steps=%d",
                      FLAGS_mlp_steps, FLAGS_cnn_steps));
  const auto rate = [](const pstrain::LocalTrainingResult& r) {
    return absl::StrFormat("%.0f", r.examples_per_sec);
  };
  report.Table({"run", "examples/s (wall)", "examples per CPU second", "steps"},
               {{"MLP 784-256-128-10", rate(mlp_run.wall), rate(mlp_run.cpu),
                 absl::StrCat(mlp_run.wall.global_step)},
                {"the same MLP from PyTorch (ONNX import)", rate(onnx_run.wall), rate(onnx_run.cpu),
                 absl::StrCat(onnx_run.wall.global_step)},
                {"CNN 32-64-k5-128", rate(cnn_run.wall), rate(cnn_run.cpu),
                 absl::StrCat(cnn_run.wall.global_step)}});
  report.Table(
      {"MLP to accuracy", "training s (wall)", "training s (CPU)", "steps", "epochs", "accuracy"},
      {{absl::StrFormat("%.0f%%%s", FLAGS_target_accuracy * 100, reached ? "" : " (not reached)"),
        absl::StrFormat("%.2f", target_run.wall.train_seconds),
        absl::StrFormat("%.2f", target_run.cpu.train_seconds),
        absl::StrCat(target_run.wall.global_step),
        absl::StrFormat("%.1f", target_run.wall.global_step / 469.0),
        absl::StrFormat("%.4f", target_run.wall.eval_metrics.at("accuracy"))}});
  report.Paragraph(
      "The same MLP defined in PyTorch (common/model/onnx/testdata/make_fixtures.py, ReluMlp), "
      "exported by torch.onnx.export and imported from its ONNX graph, against the built-in "
      "MLP, by examples per CPU second.");
  report.Paragraph(absl::StrFormat(
      "Target: the imported MLP at >= 0.9x the built-in MLP's examples per CPU second: **%s** "
      "(%.2fx).",
      onnx_ratio >= 0.9 ? "met" : "not met", onnx_ratio));
  const absl::Status written = report.WriteTo(FLAGS_report);
  if (!written.ok()) {
    std::fprintf(stderr, "training_benchmark: %s\n", std::string(written.message()).c_str());
    return 1;
  }
  return reached ? 0 : 1;
}
