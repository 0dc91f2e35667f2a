// The `pstrain` commands as a user runs them, against real clusters on
// loopback: every job command, its exit codes and JSON, and `pstrain local`
// leaving no process behind after success, Ctrl-C and, with --restart=never, a
// crashed worker.

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/binary_locator.h"
#include "client/local_cluster.h"
#include "client/report/testing/xml_check.h"
#include "common/process/child_process.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/job_output.h"
#include "tests/pstrain_command.h"

namespace pstrain {
namespace {

// Every wait of these tests has a deadline well under the test's timeout.
constexpr absl::Duration kCommandDeadline = absl::Seconds(90);

// A small job: logistic regression on synthetic click logs, a few seconds.
std::string WriteSpec(const std::string& dir, const std::string& name, int64_t max_steps) {
  testing_jobs::ClicksJob job;
  job.name = name;
  job.model_dir = name;
  job.max_steps = max_steps;
  const std::string path = dir + "/" + name + ".pbtxt";
  std::ofstream(path) << job.Text();
  return path;
}

struct PstrainRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
  std::string stdout_only;
};

// `pstrain args...` started in the background.
struct PstrainProcess {
  std::string command;                  // args.front()
  std::string log;                      // its stdout is in <log>.stdout, stderr in <log>.err
  std::unique_ptr<ChildProcess> child;  // null if it could not start
};

PstrainProcess StartPstrain(const std::vector<std::string>& args) {
  static int counter = 0;
  PstrainProcess process;
  process.command = args.front();
  absl::StatusOr<std::string> program = LocateBinary("pstrain", "");
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return process;
  process.log = testing::TempDir() + "/pstrain_cli_" + std::to_string(++counter);
  // stdout to one file (JSON must be alone there), stderr to another.
  std::vector<std::string> shell_args = {
      "-c", "\"$0\" \"$@\" > " + process.log + ".stdout 2> " + process.log + ".err", *program};
  shell_args.insert(shell_args.end(), args.begin(), args.end());
  auto child = ChildProcess::Start({"/bin/sh", shell_args, {}, ""});
  EXPECT_TRUE(child.ok()) << child.status();
  if (child.ok()) process.child = *std::move(child);
  return process;
}

// Waits for a process StartPstrain started to end.
PstrainRun FinishPstrain(PstrainProcess& process) {
  PstrainRun run;
  if (process.child == nullptr) return run;
  absl::StatusOr<ExitStatus> status = process.child->Wait(kCommandDeadline);
  EXPECT_TRUE(status.ok()) << "pstrain " << process.command << ": " << status.status();
  if (status.ok()) run.exit_code = status->exit_code;
  run.stdout_only = ReadWholeFile(process.log + ".stdout");
  run.output = run.stdout_only + ReadWholeFile(process.log + ".err");
  return run;
}

// Runs `pstrain args...` to its end.
PstrainRun Pstrain(const std::vector<std::string>& args) {
  PstrainProcess process = StartPstrain(args);
  return FinishPstrain(process);
}

google::protobuf::Struct ParseJson(const std::string& json) {
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  return parsed;
}

// The pid of every process `pstrain local` started, from the ready files it
// had them write in the run folder.
std::vector<int> ChildPids(const std::string& run_dir) {
  std::vector<int> pids;
  for (const char* name : {"coordinator-0", "ps-0", "worker-0", "worker-1", "evaluator-0"}) {
    if (const int pid = ReadyFilePid(run_dir, name); pid != 0) pids.push_back(pid);
  }
  return pids;
}

// Polls `pstrain status` until job `job_id` is in `state` ("RUNNING");
// false if it is not within kCommandDeadline.
bool AwaitJobState(const std::string& coordinator, const std::string& job_id,
                   const std::string& state) {
  const absl::Time end = absl::Now() + kCommandDeadline;
  while (absl::Now() < end) {
    const PstrainRun status = Pstrain({"status", job_id, coordinator, "--output=json"});
    google::protobuf::Struct parsed;
    if (status.exit_code == 0 &&
        google::protobuf::util::JsonStringToMessage(status.stdout_only, &parsed).ok()) {
      auto it = parsed.fields().find("state");
      if (it != parsed.fields().end() && it->second.string_value() == state) return true;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  return false;
}

class JobCommandsTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::TempDir() + "/job_commands";
    ::mkdir(root_.c_str(), 0755);
    LocalClusterOptions options;
    options.num_ps = 1;
    options.num_workers = 2;
    options.run_dir = root_ + "/run";
    options.checkpoint_root = root_;
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    coordinator_ = "--coordinator_address=" + cluster_->coordinator().grpc_address;
  }

  void TearDown() override {
    if (cluster_ != nullptr) cluster_->Stop(absl::Seconds(30)).IgnoreError();
  }

  std::string root_;
  std::unique_ptr<LocalCluster> cluster_;
  std::string coordinator_;
};

TEST_F(JobCommandsTest, SubmitWatchStatusListClusterStopShutdown) {
  PstrainRun cluster = Pstrain({"cluster", coordinator_});
  EXPECT_EQ(cluster.exit_code, 0) << cluster.output;
  for (const char* expected : {"MEMBER", "INCARNATION", "HEARTBEAT", "QUEUE", "ps/0", "worker/1",
                               "evaluator/0", "running job: none"}) {
    EXPECT_NE(cluster.output.find(expected), std::string::npos) << expected << "\n"
                                                                << cluster.output;
  }
  PstrainRun cluster_json = Pstrain({"cluster", coordinator_, "--output=json"});
  EXPECT_EQ(ParseJson(cluster_json.stdout_only).fields().at("members").list_value().values_size(),
            4)
      << cluster_json.output;

  // An invalid spec is refused before anything is sent, naming the field.
  const std::string bad = root_ + "/bad.pbtxt";
  std::ofstream(bad) << "model { mlp {} } train_data { fashion_mnist {} } "
                        "optimizer { learning_rate: -1 } stop { max_steps: 10 } "
                        "checkpoint { model_dir: \"bad\" }";
  PstrainRun refused = Pstrain({"submit", bad, coordinator_});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("optimizer.learning_rate must be > 0, got -1"), std::string::npos)
      << refused.output;

  // A job that trains until it is stopped holds the cluster, so the next
  // one waits in the queue until `watch` follows it: a watch shows what
  // happens from when it starts, and must not miss the job's progress.
  PstrainRun long_job =
      Pstrain({"submit", WriteSpec(root_, "long", 1000000), coordinator_, "--output=json"});
  ASSERT_EQ(long_job.exit_code, 0) << long_job.output;
  const std::string long_id = ParseJson(long_job.stdout_only).fields().at("job_id").string_value();
  // The refused job took no id.
  ASSERT_EQ(long_id, "long-1") << long_job.output;
  ASSERT_TRUE(AwaitJobState(coordinator_, long_id, "RUNNING")) << long_id << " never ran";
  // A watch that runs out of time says so with its own exit code; the job
  // goes on.
  PstrainRun gave_up = Pstrain({"watch", long_id, coordinator_, "--watch_timeout_secs=1"});
  EXPECT_EQ(gave_up.exit_code, 6) << gave_up.output;
  EXPECT_NE(gave_up.output.find("did not end within 1s"), std::string::npos) << gave_up.output;
  // The cluster will not shut down under a running job unless told to
  // stop it: a refusal of the cluster's present state.
  PstrainRun refused_shutdown = Pstrain({"shutdown", coordinator_});
  EXPECT_EQ(refused_shutdown.exit_code, 7) << refused_shutdown.output;
  EXPECT_NE(refused_shutdown.output.find("pass --stop_job"), std::string::npos)
      << refused_shutdown.output;
  ASSERT_TRUE(AwaitJobState(coordinator_, long_id, "RUNNING")) << long_id << " stopped";
  const std::string clicks_spec = WriteSpec(root_, "clicks", 200);
  PstrainRun submitted = Pstrain(
      {"submit", clicks_spec, coordinator_, "--output=json", "--request_id=clicks-from-ci"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string job_id = ParseJson(submitted.stdout_only).fields().at("job_id").string_value();
  ASSERT_EQ(job_id, "clicks-2") << submitted.output;
  // The same submit again, as a script does when the first answer was
  // lost: the job it queued, nothing new.
  PstrainRun resubmitted =
      Pstrain({"submit", clicks_spec, coordinator_, "--request_id=clicks-from-ci"});
  EXPECT_EQ(resubmitted.exit_code, 0) << resubmitted.output;
  EXPECT_NE(resubmitted.output.find("job clicks-2 was submitted before with request id "
                                    "clicks-from-ci; nothing new was queued (it is QUEUED)"),
            std::string::npos)
      << resubmitted.output;
  PstrainRun reused = Pstrain({"submit", WriteSpec(root_, "clicks-longer", 300), coordinator_,
                               "--request_id=clicks-from-ci"});
  EXPECT_EQ(reused.exit_code, 2) << reused.output;
  EXPECT_NE(reused.output.find("request id clicks-from-ci queued job clicks-2 with another spec"),
            std::string::npos)
      << reused.output;
  // validate checks what the start would, and queues nothing.
  PstrainRun validated = Pstrain({"validate", clicks_spec, coordinator_});
  EXPECT_EQ(validated.exit_code, 0) << validated.output;
  EXPECT_NE(validated.output.find("would run this job; nothing was queued"), std::string::npos)
      << validated.output;
  // watch follows the job to its end, then exits with its outcome. Its
  // first line is the status its stream starts with.
  PstrainProcess watch = StartPstrain({"watch", job_id, coordinator_});
  ASSERT_NE(watch.child, nullptr);
  ASSERT_TRUE(WaitForText(watch.log + ".stdout", "job " + job_id + ": QUEUED", kCommandDeadline))
      << ReadWholeFile(watch.log + ".stdout") << ReadWholeFile(watch.log + ".err");

  // A stopped job: watch ends with it and exits 1. Stopping the running
  // job lets the queued one run.
  PstrainRun stop = Pstrain({"stop", long_id, coordinator_});
  EXPECT_EQ(stop.exit_code, 0) << stop.output;
  EXPECT_NE(stop.output.find("stopping job " + long_id), std::string::npos) << stop.output;
  PstrainRun stopped = Pstrain({"watch", long_id, coordinator_, "--output=json"});
  EXPECT_EQ(stopped.exit_code, 1) << stopped.output;
  EXPECT_NE(stopped.stdout_only.find("\"state\":\"STOPPED\""), std::string::npos) << stopped.output;

  PstrainRun watched = FinishPstrain(watch);
  EXPECT_EQ(watched.exit_code, 0) << watched.output;
  for (const char* expected : {"checkpoint at step", "eval at step", "final evaluation (step"}) {
    EXPECT_NE(watched.output.find(expected), std::string::npos) << expected << "\n"
                                                                << watched.output;
  }
  // Progress is throttled, so which steps it shows varies from run to run;
  // what a user relies on is that it shows some, never going back, and that
  // the job's end names its state and a step past the limit.
  const std::vector<int64_t> shown = testing_jobs::ProgressSteps(watched.output, 200);
  EXPECT_FALSE(shown.empty()) << watched.output;
  EXPECT_TRUE(std::is_sorted(shown.begin(), shown.end())) << watched.output;
  const std::optional<int64_t> final_step = testing_jobs::FinalStep(watched.output, "SUCCEEDED");
  ASSERT_TRUE(final_step.has_value()) << watched.output;
  EXPECT_GE(*final_step, 200) << watched.output;

  PstrainRun status = Pstrain({"status", job_id, coordinator_, "--output=json"});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  const auto fields = ParseJson(status.stdout_only).fields();
  EXPECT_EQ(fields.at("state").string_value(), "SUCCEEDED");
  EXPECT_GE(fields.at("global_step").number_value(), 200);
  EXPECT_GT(fields.at("examples_per_sec").number_value(), 0);
  EXPECT_GT(fields.at("auc").number_value(), 0);
  EXPECT_GT(fields.at("loss").number_value(), 0);
  PstrainRun status_text = Pstrain({"status", coordinator_});  // the newest job
  EXPECT_NE(status_text.output.find("state            SUCCEEDED"), std::string::npos)
      << status_text.output;

  PstrainRun list = Pstrain({"list", coordinator_});
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find(job_id), std::string::npos) << list.output;
  EXPECT_NE(list.output.find(long_id), std::string::npos) << list.output;

  // The finished job's spec again would end as it started: refused, naming
  // the checkpoint and the way on, and queueing nothing; a new folder is
  // accepted.
  PstrainRun finished = Pstrain({"submit", clicks_spec, coordinator_});
  EXPECT_EQ(finished.exit_code, 7) << finished.output;
  EXPECT_NE(finished.output.find("holds a finished run: its newest checkpoint, ckpt-"),
            std::string::npos)
      << finished.output;
  EXPECT_NE(finished.output.find("raise stop.max_steps"), std::string::npos) << finished.output;
  PstrainRun elsewhere =
      Pstrain({"validate", clicks_spec, coordinator_, "--model_dir=clicks-again"});
  EXPECT_EQ(elsewhere.exit_code, 0) << elsewhere.output;
  EXPECT_NE(elsewhere.output.find("clicks-again"), std::string::npos) << elsewhere.output;
  PstrainRun jobs = Pstrain({"list", coordinator_, "--output=json"});
  EXPECT_EQ(ParseJson(jobs.stdout_only).fields().at("jobs").list_value().values_size(), 2)
      << jobs.output;

  // An unknown job is a clear NotFound, exit code 2.
  for (const char* command : {"status", "watch", "stop"}) {
    PstrainRun unknown = Pstrain({command, "no-such-job", coordinator_});
    EXPECT_EQ(unknown.exit_code, 2) << command << ": " << unknown.output;
    EXPECT_NE(unknown.output.find("no job 'no-such-job'"), std::string::npos) << unknown.output;
  }

  PstrainRun shutdown = Pstrain({"shutdown", coordinator_});
  EXPECT_EQ(shutdown.exit_code, 0) << shutdown.output;
  // Every member and the coordinator exit on their own.
  const absl::Time end = absl::Now() + absl::Seconds(30);
  while (cluster_->FirstExitedTask() == std::nullopt && absl::Now() < end) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_NE(cluster_->FirstExitedTask(), std::nullopt) << "nothing exited after shutdown";
  EXPECT_TRUE(cluster_->Stop(absl::Seconds(30)).ok());
}

TEST(CliTest, AnUnreachableCoordinatorExitsThreeSayingWhereAndWhatToTry) {
  // Under the flag's old name, which scripts may still use.
  PstrainRun run = Pstrain({"status", "--coordinator=127.0.0.1:1"});
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find("pstrain: --coordinator is deprecated; use --coordinator_address"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("cannot reach the coordinator at 127.0.0.1:1 (connection refused); "
                            "start one with `pstrain local --keep_running`"),
            std::string::npos)
      << run.output;
}

TEST(CliTest, UsageErrorsExitTwoAndHelpShowsTheCommand) {
  PstrainRun unknown_flag = Pstrain({"local", "--nonsense"});
  EXPECT_EQ(unknown_flag.exit_code, 2) << unknown_flag.output;
  EXPECT_NE(unknown_flag.output.find("unknown flag --nonsense"), std::string::npos);
  // A cluster size out of range is refused before anything starts.
  PstrainRun replicas = Pstrain({"local", "--ps_replicas=3"});
  EXPECT_EQ(replicas.exit_code, 2) << replicas.output;
  EXPECT_NE(replicas.output.find("--ps_replicas must be 0 or 1, got 3"), std::string::npos)
      << replicas.output;
  EXPECT_EQ(replicas.output.find("Starting"), std::string::npos) << replicas.output;
  // The exit codes are listed once, in the program's help.
  PstrainRun overview = Pstrain({"--help"});
  EXPECT_EQ(overview.exit_code, 0);
  for (const char* row : {"  5  refused: the coordinator did not accept the token",
                          "  6  gave up waiting", "  7  the cluster refused the request"}) {
    EXPECT_NE(overview.output.find(row), std::string::npos) << row << "\n" << overview.output;
  }
  PstrainRun help = Pstrain({"submit", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("Usage: pstrain submit JOB.pbtxt"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("Example:"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("--coordinator_address"), std::string::npos) << help.output;
  PstrainRun all = Pstrain({"--help"});
  for (const char* command : {"local", "submit", "status", "list", "watch", "stop", "cluster",
                              "shutdown", "train-local"}) {
    EXPECT_NE(all.output.find(std::string("\n  ") + command), std::string::npos) << command;
  }
}

class PstrainLocalTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTestFolder();
    run_dir_ = root_ + "/run";
  }

  // `pstrain local SPEC more_flags...` in the background, its output in log_.
  std::unique_ptr<ChildProcess> StartLocal(const std::string& spec,
                                           const std::vector<std::string>& more_flags = {}) {
    log_ = root_ + "/local.out";
    std::vector<std::string> args = {"local",
                                     spec,
                                     "--checkpoint_root=" + root_,
                                     "--run_dir=" + run_dir_,
                                     "--coordinator_address=127.0.0.1:0",
                                     "--workers=2"};
    args.insert(args.end(), more_flags.begin(), more_flags.end());
    return LaunchPstrain(args, log_);
  }

  void ExpectEveryChildGone() {
    const std::vector<int> pids = ChildPids(run_dir_);
    EXPECT_EQ(pids.size(), 5u) << "ready files in " << run_dir_;
    for (int pid : pids) EXPECT_TRUE(ProcessIsGone(pid)) << "pid " << pid << " still runs";
  }

  std::string root_;
  std::string run_dir_;
  std::string log_;
};

TEST_F(PstrainLocalTest, SucceedsWithJsonAndLeavesNoProcess) {
  PstrainRun run =
      Pstrain({"local", WriteSpec(root_, "ok", 150), "--checkpoint_root=" + root_,
               "--run_dir=" + run_dir_, "--coordinator_address=127.0.0.1:0", "--output=json"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const auto fields = ParseJson(run.stdout_only).fields();
  EXPECT_EQ(fields.at("state").string_value(), "SUCCEEDED");
  EXPECT_GE(fields.at("global_step").number_value(), 150);
  EXPECT_GT(fields.at("examples_per_sec").number_value(), 0);
  EXPECT_TRUE(fields.contains("auc")) << run.stdout_only;
  ExpectEveryChildGone();
}

// What a user does with a finished job's model_dir: a report to read, an
// export, predictions from it.
TEST_F(PstrainLocalTest, ReportExportAndPredictWorkOnWhatAJobLeft) {
  PstrainRun run = Pstrain({"local", WriteSpec(root_, "done", 150), "--checkpoint_root=" + root_,
                            "--run_dir=" + run_dir_, "--coordinator_address=127.0.0.1:0"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string model_dir = root_ + "/done";
  // The evaluator's export holds the model as ONNX too.
  const size_t exported_line = run.output.find("exported model: ");
  ASSERT_NE(exported_line, std::string::npos) << run.output;
  const std::string best = run.output.substr(
      exported_line + 16, run.output.find('\n', exported_line) - exported_line - 16);
  EXPECT_TRUE(std::ifstream(best + "/model.onnx").good()) << best;

  PstrainRun report = Pstrain({"report", model_dir});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_EQ(report.stdout_only, model_dir + "/report.html\n");
  const std::string html = ReadWholeFile(model_dir + "/report.html");
  absl::Status well_formed = testing_util::CheckWellFormedXml(html);
  EXPECT_TRUE(well_formed.ok()) << well_formed;
  // One plot per training scalar the coordinator wrote and per eval metric.
  for (const char* title :
       {"train loss", "learning rate", "examples/s", "global steps/s", "eval loss", "eval auc"}) {
    EXPECT_NE(html.find(absl::StrCat(">", title, "<")), std::string::npos) << title;
  }
  int plots = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    ++plots;
  }
  EXPECT_GE(plots, 6);

  const std::string exported = root_ + "/done-export";
  PstrainRun exported_run = Pstrain({"export", model_dir, "--to=" + exported});
  ASSERT_EQ(exported_run.exit_code, 0) << exported_run.output;
  EXPECT_NE(
      exported_run.stdout_only.find("ONNX model for ONNX Runtime: " + exported + "/model.onnx"),
      std::string::npos)
      << exported_run.output;
  EXPECT_TRUE(std::ifstream(exported + "/model.onnx").good());
  // Refused, changing nothing: the folder exists now.
  EXPECT_EQ(Pstrain({"export", model_dir, "--to=" + exported}).exit_code, 2);

  // Three click logs in libsvm form: ids of fields 0..7 (1000 per field).
  const std::string input = root_ + "/clicks.libsvm";
  std::ofstream(input) << "1 1:1 1001:1 2001:1 3001:1 4001:1 5001:1 6001:1 7001:1\n"
                       << "0 2:1 1002:1 2002:1 3002:1 4002:1 5002:1 6002:1 7002:1\n"
                       << "0 10:1 1010:1 2010:1 3010:1 4010:1 5010:1 6010:1 7010:1\n";
  PstrainRun predicted = Pstrain({"predict", exported, input, "--libsvm_zero_based"});
  EXPECT_EQ(predicted.exit_code, 0) << predicted.output;
  EXPECT_NE(predicted.output.find("3 examples"), std::string::npos) << predicted.output;
  EXPECT_NE(predicted.output.find("accuracy"), std::string::npos) << predicted.output;
  // A missing input names the file and exits 2.
  PstrainRun missing = Pstrain({"predict", exported, root_ + "/none.csv"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("none.csv"), std::string::npos) << missing.output;
}

// The fastest path keeps its result as a cluster job does: the same
// model_dir layout, so the same commands read it.
TEST_F(PstrainLocalTest, TrainLocalKeepsCheckpointsAndTheExportInItsModelDir) {
  const std::string model_dir = root_ + "/kept";
  PstrainRun run = Pstrain(
      {"train-local", WriteSpec(root_, "kept", 150), "--model_dir=" + model_dir, "--output=json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto fields = ParseJson(run.stdout_only).fields();
  const int64_t step = static_cast<int64_t>(fields.at("global_step").number_value());
  EXPECT_GE(step, 150);
  EXPECT_EQ(fields.at("checkpoint").string_value(), absl::StrCat(model_dir, "/ckpt-", step));
  EXPECT_TRUE(std::ifstream(absl::StrCat(model_dir, "/ckpt-", step, "/MANIFEST")).good());
  const std::string best = fields.at("export_path").string_value();
  EXPECT_EQ(best, absl::StrCat(model_dir, "/export/best/", step));
  EXPECT_TRUE(std::ifstream(best + "/model.onnx").good()) << best;
  EXPECT_TRUE(std::ifstream(absl::StrCat(model_dir, "/export/final/", step, "/MANIFEST")).good());

  PstrainRun report = Pstrain({"report", model_dir, "--to=" + root_ + "/kept.html"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const std::string html = ReadWholeFile(root_ + "/kept.html");
  for (const char* title : {"train loss", "learning rate", "eval auc"}) {
    EXPECT_NE(html.find(absl::StrCat(">", title, "<")), std::string::npos) << title;
  }
  // A checkpoint written in this one process exports as a cluster's does.
  PstrainRun exported = Pstrain({"export", model_dir, "--to=" + root_ + "/kept-export"});
  EXPECT_EQ(exported.exit_code, 0) << exported.output;

  // It does not resume: a second run refuses the folder and changes nothing.
  PstrainRun again =
      Pstrain({"train-local", WriteSpec(root_, "kept", 150), "--model_dir=" + model_dir});
  EXPECT_EQ(again.exit_code, 7) << again.output;
  EXPECT_NE(again.output.find("already holds checkpoints"), std::string::npos) << again.output;
  EXPECT_TRUE(std::ifstream(absl::StrCat(model_dir, "/ckpt-", step, "/MANIFEST")).good());
}

TEST_F(PstrainLocalTest, CtrlCStopsTheJobGracefullyAndLeavesNoProcess) {
  std::unique_ptr<ChildProcess> local = StartLocal(WriteSpec(root_, "interrupted", 1000000));
  ASSERT_NE(local, nullptr);
  ASSERT_TRUE(WaitForText(log_, "step ", kCommandDeadline)) << ReadWholeFile(log_);
  local->Signal(SIGINT);
  absl::StatusOr<ExitStatus> exit = local->Wait(kCommandDeadline);
  ASSERT_TRUE(exit.ok()) << exit.status() << "\n" << ReadWholeFile(log_);
  const std::string output = ReadWholeFile(log_);
  EXPECT_EQ(exit->exit_code, 1) << output;
  for (const char* expected :
       {"stopping job interrupted-1 (final checkpoint first", "checkpoint at step",
        "STOPPED at step", "Every process exited cleanly"}) {
    EXPECT_NE(output.find(expected), std::string::npos) << expected << "\n" << output;
  }
  ExpectEveryChildGone();
}

TEST_F(PstrainLocalTest, AJobTimeoutGivesUpWithItsOwnExitCodeAndLeavesNoProcess) {
  PstrainRun run = Pstrain({"local", WriteSpec(root_, "endless", 1000000),
                            "--checkpoint_root=" + root_, "--run_dir=" + run_dir_,
                            "--coordinator_address=127.0.0.1:0", "--job_timeout_secs=3"});
  EXPECT_EQ(run.exit_code, 6) << run.output;
  EXPECT_NE(run.output.find("job endless-1 did not end within 3s"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("Every process exited cleanly"), std::string::npos) << run.output;
  ExpectEveryChildGone();
}

// Today's behaviour, kept by --restart=never (by default the worker would be
// restarted: local_restart_test).
TEST_F(PstrainLocalTest, WithRestartNeverAKilledWorkerEndsTheRunNamingItAndLeavesNoProcess) {
  std::unique_ptr<ChildProcess> local =
      StartLocal(WriteSpec(root_, "crashed", 1000000), {"--restart=never"});
  ASSERT_NE(local, nullptr);
  ASSERT_TRUE(WaitForText(log_, "step ", kCommandDeadline)) << ReadWholeFile(log_);
  const std::vector<int> pids = ChildPids(run_dir_);
  ASSERT_EQ(pids.size(), 5u);
  const int worker = pids[3];  // worker-1
  ASSERT_EQ(::kill(worker, SIGKILL), 0);
  const absl::Time killed = absl::Now();
  absl::StatusOr<ExitStatus> exit = local->Wait(kCommandDeadline);
  ASSERT_TRUE(exit.ok()) << exit.status() << "\n" << ReadWholeFile(log_);
  const std::string output = ReadWholeFile(log_);
  EXPECT_EQ(exit->exit_code, 1) << output;
  EXPECT_LT(absl::Now() - killed, absl::Seconds(30)) << "noticed late:\n" << output;
  EXPECT_NE(output.find("worker/1 (pid " + std::to_string(worker) +
                        ") exited with killed by signal 9 (Killed) while the job ran; it is not "
                        "restarted (--restart=never); stopping the cluster."),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("restarting it"), std::string::npos) << output;
  EXPECT_NE(output.find("--- end of " + run_dir_ + "/worker-1.log ---"), std::string::npos)
      << output;
  ExpectEveryChildGone();
}

}  // namespace
}  // namespace pstrain
