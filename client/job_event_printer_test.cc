#include "client/job_event_printer.h"

#include <sstream>

#include "gtest/gtest.h"

namespace pstrain {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

JobEvent Progress(int64_t step, double loss) {
  JobEvent event;
  event.mutable_progress()->set_global_step(step);
  event.mutable_progress()->set_loss(loss);
  event.mutable_progress()->set_examples_per_sec(1000);
  return event;
}

JobEvent Eval(int64_t step, double accuracy) {
  JobEvent event;
  event.mutable_eval()->set_checkpoint_step(step);
  (*event.mutable_eval()->mutable_metrics())["accuracy"] = accuracy;
  (*event.mutable_eval()->mutable_metrics())["loss"] = 0.5;
  return event;
}

TEST(JobEventPrinterTest, PlainLinesAreThrottledButTheNewestIsNeverLost) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kPlainLines}, 300, "accuracy",
                          absl::Seconds(5));
  printer.Print(Progress(10, 0.9), kStart);
  printer.Print(Progress(20, 0.8), kStart + absl::Seconds(1));  // within 5 s: held back
  printer.Print(Eval(20, 0.7), kStart + absl::Seconds(2));      // ... printed before this
  printer.Print(Progress(30, 0.6), kStart + absl::Seconds(3));
  printer.Finish();  // ... and the newest at the end
  EXPECT_EQ(out.str(),
            "step 10/300       loss 0.9000      1000 examples/s\n"
            "step 20/300       loss 0.8000      1000 examples/s  ETA 28s\n"
            "eval at step 20: accuracy 0.7000  loss 0.5000\n"
            "step 30/300       loss 0.6000      1000 examples/s  accuracy 0.7000  ETA 40s\n");
}

TEST(JobEventPrinterTest, ASkippedCheckpointSaysWhy) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kPlainLines}, 300, "accuracy",
                          absl::Seconds(5));
  JobEvent skipped;
  skipped.mutable_eval()->set_checkpoint_step(200);
  skipped.mutable_eval()->set_skipped_reason("a newer checkpoint came before its turn");
  printer.Print(skipped, kStart);
  printer.Print(Eval(300, 0.8), kStart + absl::Seconds(1));
  EXPECT_EQ(out.str(),
            "eval at step 200: skipped, a newer checkpoint came before its turn\n"
            "eval at step 300: accuracy 0.8000  loss 0.5000\n");
}

JobEvent Status(JobState state, const std::string& reason, int32_t rollbacks) {
  JobEvent event;
  event.mutable_status()->set_job_id("clicks-1");
  event.mutable_status()->set_state(state);
  event.mutable_status()->set_reason(reason);
  event.mutable_status()->set_rollbacks(rollbacks);
  if (rollbacks > 0) {
    event.mutable_status()->set_last_rollback(
        "ps/1 (a parameter server of the job) restarted; rolled back from step 812 to ckpt-800 "
        "at step 800");
  }
  return event;
}

// A rollback changes no state: its line is what tells a person that a lost
// parameter server came back and where training went on from.
TEST(JobEventPrinterTest, EachRollbackIsSaidOnceWithWhatWasLost) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kPlainLines}, 3000, "",
                          absl::Seconds(5));
  printer.Print(Status(JOB_STATE_RUNNING, "", 0), kStart);
  printer.Print(Status(JOB_STATE_RUNNING, "training paused: rolling 2 parameter servers back", 0),
                kStart);
  printer.Print(Status(JOB_STATE_RUNNING, "", 1), kStart);
  printer.Print(Status(JOB_STATE_RUNNING, "", 1), kStart);
  EXPECT_EQ(out.str(),
            "job clicks-1: RUNNING\n"
            "job clicks-1: RUNNING (training paused: rolling 2 parameter servers back)\n"
            "job clicks-1 rolled back (1 time): ps/1 (a parameter server of the job) restarted; "
            "rolled back from step 812 to ckpt-800 at step 800\n"
            "job clicks-1: RUNNING\n");
}

// A failover changes no state either: its line says which shard's backup
// took over, once.
TEST(JobEventPrinterTest, EachFailoverIsSaidOnceWithWhoTookOver) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kPlainLines}, 3000, "",
                          absl::Seconds(5));
  JobEvent failed_over = Status(JOB_STATE_RUNNING, "", 0);
  failed_over.mutable_status()->set_failovers(1);
  failed_over.mutable_status()->set_last_failover(
      "ps/0 (a parameter server of the job) was lost; it was shard 0's primary: ps/2 took over "
      "as its primary (epoch 2) at step 812");
  printer.Print(Status(JOB_STATE_RUNNING, "", 0), kStart);
  printer.Print(failed_over, kStart);
  printer.Print(failed_over, kStart);
  EXPECT_EQ(out.str(),
            "job clicks-1: RUNNING\n"
            "job clicks-1 failed over (1 time): ps/0 (a parameter server of the job) was lost; "
            "it was shard 0's primary: ps/2 took over as its primary (epoch 2) at step 812\n");
}

TEST(JobEventPrinterTest, EachRebuiltBackupIsSaidOnce) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kPlainLines}, 3000, "",
                          absl::Seconds(5));
  JobEvent rebuilt = Status(JOB_STATE_RUNNING, "", 0);
  rebuilt.mutable_status()->set_backups_rebuilt(2);
  rebuilt.mutable_status()->set_last_backup_rebuilt(
      "ps/0 rejoined shard 0 as its backup (state 0.1 MB, caught up in 70ms) at step 211");
  printer.Print(Status(JOB_STATE_RUNNING, "", 0), kStart);
  printer.Print(rebuilt, kStart);
  printer.Print(rebuilt, kStart);
  EXPECT_EQ(out.str(),
            "job clicks-1: RUNNING\n"
            "job clicks-1 rebuilt a backup (2 times): ps/0 rejoined shard 0 as its backup "
            "(state 0.1 MB, caught up in 70ms) at step 211\n");
}

TEST(JobEventPrinterTest, AFailedCheckpointSaysWhyAndHowManyMoreTheJobTakes) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kPlainLines}, 3000, "",
                          absl::Seconds(5));
  JobEvent failed;
  CheckpointFailure* failure = failed.mutable_checkpoint_failure();
  failure->set_step(600);
  failure->set_message("ps/0: Snapshot: /m/ckpt-600.tmp/shard: No space left on device");
  failure->set_consecutive_failures(1);
  failure->set_max_consecutive_failures(3);
  printer.Print(failed, kStart);
  failure->set_step(3000);
  failure->set_final(true);
  printer.Print(failed, kStart + absl::Seconds(1));
  failure->set_final(false);
  failure->set_max_consecutive_failures(0);
  printer.Print(failed, kStart + absl::Seconds(2));
  EXPECT_EQ(out.str(),
            "checkpoint at step 600 failed (1 in a row; the job fails at 3): ps/0: Snapshot: "
            "/m/ckpt-600.tmp/shard: No space left on device\n"
            "final checkpoint at step 3000 failed (1 in a row; the job fails): ps/0: Snapshot: "
            "/m/ckpt-600.tmp/shard: No space left on device\n"
            "checkpoint at step 3000 failed (1 in a row): ps/0: Snapshot: "
            "/m/ckpt-600.tmp/shard: No space left on device\n");
}

TEST(JobEventPrinterTest, ThePlainLineThatReachesMaxStepsIsNeverHeldBack) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kPlainLines}, 20, "",
                          absl::Seconds(5));
  printer.Print(Progress(10, 0.9), kStart);
  printer.Print(Progress(20, 0.8), kStart + absl::Milliseconds(100));
  printer.Print(Progress(25, 0.7), kStart + absl::Milliseconds(200));  // held back
  EXPECT_EQ(out.str(),
            "step 10/20        loss 0.9000      1000 examples/s\n"
            "step 20/20        loss 0.8000      1000 examples/s  ETA 0s\n");
}

TEST(JobEventPrinterTest, LiveBarIsRedrawnInPlaceAndEventsGetLinesOfTheirOwn) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kLiveBar}, 100, "accuracy");
  printer.Print(Progress(50, 0.5), kStart);
  JobEvent checkpoint;
  checkpoint.mutable_checkpoint()->set_step(50);
  checkpoint.mutable_checkpoint()->set_path("/m/ckpt-50");
  printer.Print(checkpoint, kStart + absl::Seconds(1));
  printer.Print(Progress(100, 0.25), kStart + absl::Seconds(2));
  printer.Finish();
  EXPECT_EQ(out.str(),
            "[##########----------]  50%  step 50/100  1000 ex/s  loss 0.5000"
            "\r\033[Kcheckpoint at step 50: /m/ckpt-50\n"
            "[##########----------]  50%  step 50/100  1000 ex/s  loss 0.5000"
            "\r\033[K[####################] 100%  step 100/100  1000 ex/s  loss 0.2500  ETA 0s\n");
}

TEST(JobEventPrinterTest, RepeatedStatusPrintsOnce) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kText, ProgressStyle::kPlainLines}, 0, "");
  JobEvent status;
  status.mutable_status()->set_job_id("j-1");
  status.mutable_status()->set_state(JOB_STATE_RUNNING);
  printer.Print(status, kStart);
  status.mutable_status()->set_global_step(5);  // another field changed
  printer.Print(status, kStart);
  EXPECT_EQ(out.str(), "job j-1: RUNNING\n");
}

TEST(JobEventPrinterTest, JsonPrintsOneObjectPerEvent) {
  std::ostringstream out;
  JobEventPrinter printer(out, {OutputFormat::kJson, ProgressStyle::kNone}, 300, "accuracy");
  printer.Print(Progress(10, 0.9), kStart);
  printer.Print(Eval(10, 0.7), kStart);
  printer.Finish();
  const std::string text = out.str();
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_NE(text.find("\"event\":\"progress\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"accuracy\":0.7"), std::string::npos) << text;
}

}  // namespace
}  // namespace pstrain
