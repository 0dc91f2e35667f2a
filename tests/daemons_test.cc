// The pstrain binaries as a user runs them: real processes on loopback.

#include <signal.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "client/binary_locator.h"
#include "client/local_cluster.h"
#include "common/daemon/ready_file.h"
#include "common/net/health_client.h"
#include "common/net/http_get.h"
#include "common/process/child_process.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

const std::vector<std::string>& DaemonBinaries() {
  static const auto* names = new std::vector<std::string>{"pstrain-coordinator", "pstrain-ps",
                                                          "pstrain-worker", "pstrain-evaluator"};
  return *names;
}

std::string ReadFile(const std::string& path) {
  std::stringstream contents;
  contents << std::ifstream(path).rdbuf();
  return contents.str();
}

// Runs `program args...` to completion, returning its exit status and
// filling `output` with what it printed.
ExitStatus RunToEnd(const std::string& name, const std::vector<std::string>& args,
                    std::string* output, const std::vector<std::string>& env = {}) {
  absl::StatusOr<std::string> program = LocateBinary(name, "");
  EXPECT_TRUE(program.ok()) << program.status();
  const std::string log = testing::TempDir() + "/" + name + ".out";
  std::remove(log.c_str());
  auto child = ChildProcess::Start({*program, args, env, log});
  EXPECT_TRUE(child.ok()) << child.status();
  absl::StatusOr<ExitStatus> status = (*child)->Wait(absl::Seconds(60));
  EXPECT_TRUE(status.ok()) << status.status();
  *output = ReadFile(log);
  return status.ok() ? *status : ExitStatus{};
}

TEST(DaemonBinaryTest, HelpDescribesTheRoleAndItsFlags) {
  for (const std::string& name : DaemonBinaries()) {
    std::string output;
    EXPECT_EQ(RunToEnd(name, {"--help"}, &output).exit_code, 0) << name;
    EXPECT_NE(output.find("Usage: " + name), std::string::npos) << output;
    EXPECT_NE(output.find("--listen"), std::string::npos) << output;
    EXPECT_NE(output.find("--shutdown_grace_secs"), std::string::npos) << output;
    // The logging library's own flags stay out of --help.
    EXPECT_EQ(output.find("--log_dir"), std::string::npos) << output;
  }
}

// Every role but the coordinator must be told where the coordinator is.
std::vector<std::string> WithCoordinator(const std::string& name, std::vector<std::string> args) {
  if (name != "pstrain-coordinator") args.push_back("--coordinator_address=127.0.0.1:1");
  return args;
}

TEST(DaemonBinaryTest, BadSettingsExitTwoNamingTheSetting) {
  for (const std::string& name : DaemonBinaries()) {
    std::string output;
    EXPECT_EQ(RunToEnd(name, WithCoordinator(name, {"--listen=nonsense"}), &output).exit_code, 2)
        << name;
    EXPECT_NE(output.find("--listen: 'nonsense' is not host:port"), std::string::npos) << output;
    EXPECT_EQ(RunToEnd(name, {"--max_message_mb=0"}, &output).exit_code, 2) << name;
    EXPECT_NE(output.find("--max_message_mb must be in [1, 1024], got 0"), std::string::npos)
        << output;
    EXPECT_EQ(RunToEnd(name, {"stray"}, &output).exit_code, 2) << name;
    EXPECT_NE(output.find("unexpected argument 'stray'"), std::string::npos) << output;
  }
}

TEST(DaemonBinaryTest, EveryRoleButTheCoordinatorNeedsTheCoordinatorAddress) {
  for (const char* name : {"pstrain-ps", "pstrain-worker", "pstrain-evaluator"}) {
    std::string output;
    EXPECT_EQ(RunToEnd(name, {}, &output).exit_code, 2) << name;
    EXPECT_NE(output.find("coordinator"), std::string::npos) << output;
    EXPECT_EQ(RunToEnd(name, {"--coordinator_address=coordinator"}, &output).exit_code, 2);
    EXPECT_NE(output.find("--coordinator_address: 'coordinator' is not host:port"),
              std::string::npos)
        << output;
  }
}

// TF_CONFIG exactly as Kubeflow's TFJob operator sets it for ps/1.
constexpr char kTfJobPsConfig[] = R"(TF_CONFIG={"cluster": {"chief": ["job-chief-0.job.svc:2222"],)"
                                  R"( "ps": ["job-ps-0.job.svc:2222", "job-ps-1.job.svc:2222"],)"
                                  R"( "worker": ["job-worker-0.job.svc:2222"]},)"
                                  R"( "task": {"type": "ps", "index": 1}, "environment": "cloud"})";

TEST(DaemonBinaryTest, TakesItsPlaceFromTfConfigWithFlagsWinning) {
  const std::string ready = testing::TempDir() + "/tf_config.ready";
  const std::string log = testing::TempDir() + "/tf_config.log";
  std::remove(ready.c_str());
  std::remove(log.c_str());
  absl::StatusOr<std::string> program = LocateBinary("pstrain-ps", "");
  ASSERT_TRUE(program.ok()) << program.status();
  // The listed port would be fixed; the flag wins and picks a free one.
  auto child = ChildProcess::Start(
      {*program, {"--listen=127.0.0.1:0", "--ready_file=" + ready}, {kTfJobPsConfig}, log});
  ASSERT_TRUE(child.ok());
  absl::StatusOr<ReadyInfo> info = WaitForReadyFile(ready, absl::Seconds(30));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(CheckHealth(info->at("grpc"), absl::Seconds(10)).ok());
  ASSERT_TRUE((*child)->Stop(absl::Seconds(20)).ok());
  const std::string output = ReadFile(log);
  EXPECT_NE(output.find("pstrain ps 1 serving gRPC on 127.0.0.1:"), std::string::npos) << output;
  EXPECT_NE(output.find("coordinator at job-chief-0.job.svc:2222"), std::string::npos) << output;

  std::string refused;
  EXPECT_EQ(RunToEnd("pstrain-worker", {}, &refused, {kTfJobPsConfig}).exit_code, 2);
  EXPECT_NE(refused.find("TF_CONFIG: task.type is \"ps\" but this process is a worker"),
            std::string::npos)
      << refused;
}

TEST(DaemonBinaryTest, SigintAlsoShutsDownCleanly) {
  absl::StatusOr<std::string> program = LocateBinary("pstrain-ps", "");
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string ready = testing::TempDir() + "/sigint.ready";
  std::remove(ready.c_str());
  auto child = ChildProcess::Start(
      {*program, {"--ready_file=" + ready, "--coordinator_address=127.0.0.1:1"}, {}, ""});
  ASSERT_TRUE(child.ok());
  absl::StatusOr<ReadyInfo> info = WaitForReadyFile(ready, absl::Seconds(30));
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_TRUE(CheckHealth(info->at("grpc"), absl::Seconds(10)).ok());
  (*child)->Signal(SIGINT);
  absl::StatusOr<ExitStatus> exit = (*child)->Wait(absl::Seconds(30));
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_code, 0) << exit->ToString();
}

TEST(LocalClusterTest, EveryRoleServesHealthAndMetricsAndExitsZeroOnSigterm) {
  LocalClusterOptions options;
  options.num_ps = 2;
  options.num_workers = 2;
  options.run_dir = testing::TempDir() + "/every_role";
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_EQ((*cluster)->tasks().size(), 6u);
  EXPECT_TRUE((*cluster)->CheckHealthy().ok());

  for (const LocalTask& task : (*cluster)->tasks()) {
    absl::StatusOr<std::string> page = HttpGet(task.metrics_address, "/metrics", absl::Seconds(10));
    ASSERT_TRUE(page.ok()) << task.name() << ": " << page.status();
    EXPECT_NE(page->find("pstrain_process_info{role=\"" + task.role + "\"} 1"), std::string::npos)
        << task.name() << ":\n"
        << *page;
  }
  absl::Status stopped = (*cluster)->Stop(absl::Seconds(20));
  EXPECT_TRUE(stopped.ok()) << stopped;
  for (const LocalTask& task : (*cluster)->tasks()) {
    EXPECT_NE(ReadFile(task.log_path).find("pstrain " + task.role + " stopped"), std::string::npos)
        << task.log_path;
  }
}

TEST(LocalClusterTest, ADeadProcessIsNamedNotHidden) {
  LocalClusterOptions options;
  options.evaluator = false;
  options.run_dir = testing::TempDir() + "/dead_process";
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const LocalTask& ps = (*cluster)->tasks()[1];
  ASSERT_EQ(ps.name(), "ps/0");
  ASSERT_EQ(::kill(ps.pid, SIGKILL), 0);

  // The health check fails for the dead shard (polled: the kernel reaps it
  // asynchronously).
  absl::Status healthy;
  for (int attempt = 0; attempt < 100 && healthy.ok(); ++attempt) {
    healthy = (*cluster)->CheckHealthy();
    if (healthy.ok()) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_NE(healthy.message().find("ps/0"), std::string::npos) << healthy;
  absl::Status stopped = (*cluster)->Stop(absl::Seconds(20));
  EXPECT_NE(stopped.message().find("ps/0 ended with killed by signal 9"), std::string::npos)
      << stopped;
}

TEST(LocalClusterTest, RefusesBadOptionsBeforeStartingAnything) {
  LocalClusterOptions options;
  options.num_workers = 0;
  options.run_dir = testing::TempDir() + "/bad_options";
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cluster.status().message(), "num_workers must be >= 1, got 0");

  options.num_workers = 1;
  options.bin_dir = "/nonexistent";
  // The binaries are still found through the runfiles; a missing one is the
  // case to refuse, so ask for a program that does not exist.
  absl::StatusOr<std::string> missing = LocateBinary("pstrain-nothing", options.bin_dir);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/pstrain-nothing"), std::string::npos);
}

TEST(PstrainLocalTest, TheReadmeCommandStartsAndStopsACluster) {
  std::string output;
  ExitStatus exit =
      RunToEnd("pstrain", {"local", "--run_dir=" + testing::TempDir() + "/readme"}, &output);
  EXPECT_EQ(exit.exit_code, 0) << output;
  for (const char* expected : {"coordinator/0", "ps/0", "worker/0", "evaluator/0",
                               "Every process answers its health check (SERVING).",
                               "Every process exited cleanly (exit code 0)."}) {
    EXPECT_NE(output.find(expected), std::string::npos) << expected << " in:\n" << output;
  }
  EXPECT_EQ(RunToEnd("pstrain", {"launch"}, &output).exit_code, 2);
  EXPECT_NE(output.find("unknown command 'launch'"), std::string::npos) << output;
}

}  // namespace
}  // namespace pstrain
