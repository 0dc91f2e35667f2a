#include "bench/cluster/backup_figures.h"

#include <string>
#include <vector>

#include "bench/report/markdown_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A 10 s window of `rounds` sync rounds and these workers' steps, of which
// the rounds did not take the ones beyond rounds x replicas.
BackupRun SyncRun(int replicas, bool slowed, int64_t rounds, const std::vector<double>& steps) {
  BackupRun run;
  run.workers = static_cast<int>(steps.size());
  run.replicas = replicas;
  run.slowed = slowed;
  run.window.seconds = 10;
  run.window.shard_updates = rounds;
  run.window.global_steps = rounds - 7;  // a report behind
  double computed = 0;
  for (double s : steps) computed += s;
  const double late = computed - static_cast<double>(rounds) * replicas;
  for (size_t i = 0; i < steps.size(); ++i) {
    WorkerWindow worker;
    worker.task = "worker/" + std::to_string(i);
    worker.steps = steps[i];
    worker.examples = steps[i] * 128;
    worker.stale_pushes = late * steps[i] / computed;
    run.window.workers.push_back(worker);
  }
  return run;
}

// Plain sync drops to the slowed worker's pace; the backup takes its place.
BackupResults BackupHelps() {
  BackupResults results;
  results.num_ps = 2;
  results.slowing = "stopped 200 ms of every 300 ms";
  results.runs = {SyncRun(2, false, 1000, {1000, 1000}), SyncRun(2, true, 400, {400, 400}),
                  SyncRun(2, false, 900, {650, 650, 650}), SyncRun(2, true, 810, {800, 800, 300})};
  return results;
}

std::string Section(const BackupResults& results, const std::string& svg_path = "") {
  MarkdownReport report("cluster");
  AddBackupSection(results, svg_path, report);
  return report.Render();
}

TEST(BackupFiguresTest, CountsAppliedUpdatesNotComputedSteps) {
  const BackupResults results = BackupHelps();
  const BackupRun& slowed_backup = results.runs[3];
  EXPECT_DOUBLE_EQ(RoundsPerSecond(slowed_backup), 81);
  EXPECT_DOUBLE_EQ(AppliedExamplesPerSecond(slowed_backup), 81 * 2 * 128);
  EXPECT_DOUBLE_EQ(ComputedExamplesPerSecond(slowed_backup), 1900 * 128 / 10.0);
  EXPECT_DOUBLE_EQ(LateShare(slowed_backup), (1900 - 1620) / 1900.0);
  EXPECT_DOUBLE_EQ(LateShare(results.runs[1]), 0);
  EXPECT_DOUBLE_EQ(LateShare(BackupRun{}), 0);
}

TEST(BackupFiguresTest, ReportsEachSlowedRunAgainstItsOwnUndisturbedRun) {
  const std::string section = Section(BackupHelps(), "bench/backup_workers.svg");
  EXPECT_THAT(section, HasSubstr("Backup workers: sync with a slowed worker, 2 ps"));
  EXPECT_THAT(section, HasSubstr("a new cluster of 2 parameter servers"));
  EXPECT_THAT(section, HasSubstr("stopped 200 ms of every 300 ms"));
  // Plain sync slowed: 40 rounds/s of 100, 10,240 applied examples/s.
  EXPECT_THAT(section, HasSubstr("| 2 workers, every one in each round, worker/1 slowed | 40.0 | "
                                 "10240 | 40% | 0.40 |"));
  // The backup slowed: 81 of its own 90 rounds/s, and 0.81 of plain sync's.
  EXPECT_THAT(section, HasSubstr("| 3 workers, replicas_to_aggregate 2, 1 backup, worker/1 "
                                 "slowed | 81.0 | 20736 | 90% | 0.81 | 24320 | 15% | "
                                 "800, 800, 300 | 803 |"));
  EXPECT_THAT(section, HasSubstr("kept 40% of its undisturbed sync rounds/s"));
  EXPECT_THAT(section, HasSubstr("takes the slowed worker's place"));
  EXPECT_THAT(section, HasSubstr("made 0.90 times the plain job's rounds/s"));
  EXPECT_THAT(section, HasSubstr("cores the third worker's compute competes"));
  EXPECT_THAT(section, HasSubstr("**met** (90%; the plain sync job kept 40%)"));
  EXPECT_THAT(section, HasSubstr("`bench/backup_workers.svg`"));
}

TEST(BackupFiguresTest, SaysSoWhenTheBackupDoesNotHelp) {
  BackupResults results = BackupHelps();
  results.runs[3] = SyncRun(2, true, 270, {300, 300, 300});
  const std::string section = Section(results);
  EXPECT_THAT(section, HasSubstr("did not make up for the slowed worker"));
  EXPECT_THAT(section, HasSubstr("**not met** (30%; the plain sync job kept 40%)"));
  EXPECT_THAT(section, Not(HasSubstr("Chart:")));
}

TEST(BackupFiguresTest, AnIncompleteSetOfRunsAddsNoSection) {
  BackupResults results = BackupHelps();
  results.runs.pop_back();
  EXPECT_THAT(Section(results), Not(HasSubstr("Backup workers")));
  EXPECT_EQ(BackupReading(results, 2), "");
}

TEST(BackupFiguresTest, ChartsTheRoundsOfTheFourRuns) {
  const std::string svg = BackupSvg(BackupHelps());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("sync rounds per second"));
  for (const char* total : {">100 rounds/s<", ">40.0 rounds/s<", ">90.0 rounds/s<",
                            ">81.0 rounds/s<"}) {
    EXPECT_THAT(svg, HasSubstr(total));
  }
  EXPECT_THAT(svg, HasSubstr(">1 backup<"));
  EXPECT_THAT(svg, HasSubstr(">worker/1 slowed<"));
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
