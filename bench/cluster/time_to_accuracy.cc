#include "bench/cluster/time_to_accuracy.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/cluster/bench_job.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/report/markdown_table.h"

namespace pstrain {
namespace bench {

absl::StatusOr<TargetRun> RunTimeToAccuracy(ClusterBenchSettings& settings, BenchCluster& cluster) {
  BenchJob job;
  job.name = "bench-accuracy";
  job.data_dir = settings.data_dir;
  job.model_dir = settings.NewModelDir(job.name);
  job.target_accuracy = settings.target_accuracy;
  job.checkpoint_every_steps = settings.checkpoint_every_steps;
  job.max_steps = 50 * kTrainExamples / kBatch;  // a safety net: 50 epochs
  job.cosine_decay_steps = settings.cosine_decay_steps;
  Progress(absl::StrFormat("time to %.0f%% test accuracy (async, checkpoints every %d steps)",
                           settings.target_accuracy * 100, settings.checkpoint_every_steps));
  absl::StatusOr<TargetRun> run = cluster.RunToTarget(
      BenchJobSpecText(job), settings.target_accuracy, settings.accuracy_timeout);
  if (!run.ok()) return run.status();
  Progress(run->reached
               ? absl::StrFormat("  reached %.4f at step %d after %.2f s (job %s)", run->accuracy,
                                 run->step, run->seconds, JobState_Name(run->final_status.state()))
               : absl::StrCat("  not reached; job ", JobState_Name(run->final_status.state())));
  return run;
}

void AddAccuracySection(const TargetRun& run, const ClusterBenchSettings& settings,
                        MarkdownReport& report) {
  MarkdownTable table({"submit to evaluation at target (s)", "checkpoint step", "epoch",
                       "test accuracy", "first evaluation (step, s)", "evaluations", "job end"});
  const std::string first = run.evaluations.empty()
                                ? "none"
                                : absl::StrCat(run.evaluations.front().step, ", ",
                                               Fixed(run.evaluations.front().seconds, 2));
  table.AddRow(
      {run.reached ? Fixed(run.seconds, 2) : "not reached",
       run.reached ? absl::StrCat(run.step) : "",
       run.reached ? Fixed(static_cast<double>(run.step) * kBatch / kTrainExamples, 2) : "",
       run.reached ? Fixed(run.accuracy, 4) : "", first, absl::StrCat(run.evaluations.size()),
       absl::StrCat(JobState_Name(run.final_status.state()), ", ",
                    StopReason_Name(run.final_status.stop_reason()))});
  std::vector<std::string> curve;
  for (const EvaluationPoint& point : run.evaluations) {
    curve.push_back(absl::StrCat(point.step, ": ", Fixed(point.accuracy, 4)));
  }
  report.SubHeading(absl::StrCat("Time to ", Fixed(settings.target_accuracy * 100, 0),
                                 "% test accuracy (async, 1 ps + 2 workers)"));
  report.Paragraph(absl::StrCat(
      "Adam 0.001",
      settings.cosine_decay_steps > 0
          ? absl::StrCat(" decaying to 0.0001 by a cosine over ", settings.cosine_decay_steps,
                         " steps (as examples/fashion_mnist_mlp.pbtxt)")
          : " constant",
      ", batch 128; a checkpoint every ", settings.checkpoint_every_steps,
      " global steps, each evaluated on the 10,000 test images (eval.throttle_secs 0); the job "
      "stops on stop.target_metric_value. Timed from SubmitJob to the WatchJob event of the "
      "first evaluation at or above the target; the cluster was already running. An epoch is "
      "469 global steps of 128."));
  report.Table(table);
  report.Paragraph(
      absl::StrCat("Test accuracy by checkpoint step: ", absl::StrJoin(curve, ", "), "."));
  report.Target(absl::StrCat(Fixed(settings.target_accuracy * 100, 0),
                             "% test accuracy in under 20 s from submit"),
                run.reached && run.seconds < 20,
                run.reached ? absl::StrCat(Fixed(run.seconds, 2), " s") : "not reached");
}

}  // namespace bench
}  // namespace pstrain
