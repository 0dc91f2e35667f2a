#include "bench/cluster/backup_figures.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/cluster/step_breakdown_chart.h"
#include "bench/cluster/throughput_figures.h"
#include "bench/cluster/throughput_measurement.h"
#include "bench/report/markdown_table.h"

namespace pstrain {
namespace bench {
namespace {

// The runs are complete pairs: undisturbed then slowed, 2 workers then 3.
constexpr size_t kRuns = 4;
// "Most of" the undisturbed rounds/s, as the target reads it.
constexpr double kKeptTarget = 0.75;

// The undisturbed run of the pair run `index` belongs to.
const BackupRun& UndisturbedOf(const BackupResults& results, size_t index) {
  return results.runs[index - index % 2];
}

double Kept(const BackupResults& results, size_t index) {
  const double undisturbed = RoundsPerSecond(UndisturbedOf(results, index));
  return undisturbed > 0 ? RoundsPerSecond(results.runs[index]) / undisturbed : 0;
}

std::string Percent(double share) { return absl::StrCat(Fixed(100 * share, 0), "%"); }

std::string JobLabel(const BackupRun& run) {
  return run.replicas < run.workers
             ? absl::StrCat(run.workers, " workers, replicas_to_aggregate ", run.replicas, ", ",
                            run.workers - run.replicas, " backup")
             : absl::StrCat(run.workers, " workers, every one in each round");
}

std::string RunLabel(const BackupResults& results, const BackupRun& run) {
  return absl::StrCat(JobLabel(run), ", ",
                      run.slowed ? absl::StrCat(results.slowed_task, " slowed") : "undisturbed");
}

MarkdownTable RunsTable(const BackupResults& results) {
  MarkdownTable table({"run", "sync rounds/s", "applied examples/s",
                       "kept of its undisturbed rounds/s", "ratio to 2 workers undisturbed",
                       "computed examples/s", "late pushes (computed, not applied)",
                       "steps per worker", "global step change"});
  const double plain = RoundsPerSecond(results.runs.front());
  for (size_t i = 0; i < results.runs.size(); ++i) {
    const BackupRun& run = results.runs[i];
    std::vector<std::string> steps;
    for (const WorkerWindow& worker : run.window.workers) steps.push_back(Fixed(worker.steps, 0));
    table.AddRow({RunLabel(results, run), Fixed(RoundsPerSecond(run), 1),
                  Fixed(AppliedExamplesPerSecond(run), 0), run.slowed ? Percent(Kept(results, i)) : "",
                  plain > 0 ? Fixed(RoundsPerSecond(run) / plain, 2) : "",
                  Fixed(ComputedExamplesPerSecond(run), 0), Percent(LateShare(run)),
                  absl::StrJoin(steps, ", "), absl::StrCat(run.window.global_steps)});
  }
  return table;
}

}  // namespace

double RoundsPerSecond(const BackupRun& run) {
  return run.window.seconds > 0 ? run.window.shard_updates / run.window.seconds : 0;
}

double AppliedExamplesPerSecond(const BackupRun& run) {
  return RoundsPerSecond(run) * run.replicas * kBatch;
}

double ComputedExamplesPerSecond(const BackupRun& run) { return run.window.ExamplesPerSecond(); }

double LateShare(const BackupRun& run) {
  double steps = 0, late = 0;
  for (const WorkerWindow& worker : run.window.workers) {
    steps += worker.steps;
    late += worker.stale_pushes;
  }
  return steps > 0 ? late / steps : 0;
}

std::string BackupReading(const BackupResults& results, unsigned cores) {
  if (results.runs.size() != kRuns) return "";
  const double plain_kept = Kept(results, 1);
  const double backup_kept = Kept(results, 3);
  std::string verdict;
  if (backup_kept >= kKeptTarget && plain_kept < kKeptTarget) {
    verdict = "the backup worker takes the slowed worker's place in the rounds it would hold up";
  } else if (backup_kept > plain_kept) {
    verdict = "the backup keeps more, but not most, of the undisturbed rate";
  } else {
    verdict = "the backup did not make up for the slowed worker in this run";
  }
  const double plain = RoundsPerSecond(results.runs[0]);
  return absl::StrCat(
      "With ", results.slowed_task, " ", results.slowing, ", the plain sync job (",
      JobLabel(results.runs[1]), ") kept ", Percent(plain_kept),
      " of its undisturbed sync rounds/s and the job with a backup (", JobLabel(results.runs[3]),
      ") kept ", Percent(backup_kept), ": ", verdict, "; ", Percent(LateShare(results.runs[3])),
      " of the steps its workers computed came too late for their round and were not applied. "
      "Undisturbed, the job with a backup made ",
      plain > 0 ? Fixed(RoundsPerSecond(results.runs[2]) / plain, 2) : "?",
      " times the plain job's rounds/s: on this machine's ", cores,
      " cores the third worker's compute competes with the other workers and the parameter "
      "servers for the cores, a cost a backup on a host of its own would not have.");
}

void AddBackupSection(const BackupResults& results, const std::string& svg_path,
                      MarkdownReport& report) {
  if (results.runs.size() != kRuns) return;
  report.SubHeading(absl::StrCat("Backup workers: sync with a slowed worker, ", results.num_ps,
                                 " ps, Fashion-MNIST MLP"));
  report.Paragraph(absl::StrCat(
      "The e2e part's sync job (batch 128) on a new cluster of ", results.num_ps,
      results.num_ps == 1 ? " parameter server" : " parameter servers",
      " for each worker count, undisturbed and with ", results.slowed_task,
      " slowed: the benchmark sends it SIGSTOP and SIGCONT in turn, ", results.slowing,
      " (--pause_period_ms, --pause_stopped_share), from when every worker has trained to the "
      "window's end. A sync round is one update of every parameter server, counted from their "
      "versions (`pstrain_ps_version`) at both ends of the window; applied examples are rounds x "
      "gradients per round x batch. Late pushes were computed by a worker whose round closed "
      "without it (a backup's refused push; its batch is trained again). The coordinator's "
      "global step moves with the workers' progress reports, so its change over a short window "
      "is coarse."));
  report.Table(RunsTable(results));
  report.Paragraph(BackupReading(results, std::thread::hardware_concurrency()));
  report.Target(absl::StrCat("with ", results.slowed_task,
                             " slowed, the job with a backup keeps most (at least ",
                             Percent(kKeptTarget), ") of its undisturbed sync rounds/s"),
                Kept(results, 3) >= kKeptTarget,
                absl::StrCat(Percent(Kept(results, 3)), "; the plain sync job kept ",
                             Percent(Kept(results, 1))));
  if (!svg_path.empty()) {
    report.Paragraph(absl::StrCat("Chart: `", svg_path, "` (sync rounds/s of the four runs)."));
  }
}

std::string BackupSvg(const BackupResults& results) {
  StepBreakdownChart chart;
  chart.title = "Sync rounds per second, with and without a backup worker";
  chart.subtitle = absl::StrCat("MLP 784-256-128-10 on Fashion-MNIST, ", results.num_ps,
                                " ps, batch 128; slowed: ", results.slowed_task, " ",
                                results.slowing);
  chart.axis_title = "sync rounds per second";
  chart.unit = "rounds/s";
  chart.segments = {"rounds"};
  for (const BackupRun& run : results.runs) {
    chart.bars.push_back(
        {{absl::StrCat(run.workers, " workers"),
          run.replicas < run.workers ? absl::StrCat(run.workers - run.replicas, " backup")
                                     : "no backup",
          run.slowed ? absl::StrCat(results.slowed_task, " slowed") : "undisturbed"},
         {RoundsPerSecond(run)}});
  }
  return DrawStepBreakdownSvg(chart);
}

}  // namespace bench
}  // namespace pstrain
