// TLS and tokens end to end: a throw-away CA made with openssl, a local
// cluster under mutual TLS with client and cluster tokens, a job run through
// it with the right credentials, and the refusals a user would meet with
// the wrong ones.

#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/binary_locator.h"
#include "client/local_cluster.h"
#include "common/process/child_process.h"
#include "gtest/gtest.h"
#include "tests/clicks_job.h"
#include "tests/test_certificates.h"

namespace pstrain {
namespace {

constexpr absl::Duration kCommandDeadline = absl::Seconds(60);
constexpr char kClientToken[] = "client-token-5f1c9e";
constexpr char kClusterToken[] = "cluster-token-a83d27";
constexpr char kWrongToken[] = "wrong-token-77b0e4";

std::string ReadFile(const std::string& path) {
  std::stringstream contents;
  contents << std::ifstream(path).rdbuf();
  return contents.str();
}

struct CommandRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `program args...` to its end, output captured.
CommandRun RunProgram(const std::string& program, const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string log = testing::TempDir() + "/security_run_" + std::to_string(++counter);
  std::vector<std::string> shell_args = {"-c", "\"$0\" \"$@\" > " + log + " 2>&1", program};
  shell_args.insert(shell_args.end(), args.begin(), args.end());
  CommandRun run;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child =
      ChildProcess::Start({"/bin/sh", shell_args, {}, ""});
  EXPECT_TRUE(child.ok()) << child.status();
  if (!child.ok()) return run;
  absl::StatusOr<ExitStatus> status = (*child)->Wait(kCommandDeadline);
  EXPECT_TRUE(status.ok()) << program << ": " << status.status();
  if (status.ok()) run.exit_code = status->exit_code;
  run.output = ReadFile(log);
  return run;
}

class SecurityTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::TempDir() + "/security";
    ::mkdir(root_.c_str(), 0755);
    ASSERT_NO_FATAL_FAILURE(MakeTestCertificates(root_));
    for (const auto& [name, token] : {std::pair<const char*, const char*>{"client", kClientToken},
                                      {"cluster", kClusterToken},
                                      {"wrong", kWrongToken}}) {
      std::ofstream(absl::StrCat(root_, "/", name, ".token")) << token << "\n";
    }
    LocalClusterOptions options;
    options.num_ps = 1;
    options.num_workers = 1;
    options.run_dir = root_ + "/run";
    options.checkpoint_root = root_;
    options.tls_cert = root_ + "/server.crt";
    options.tls_key = root_ + "/server.key";
    options.tls_ca = root_ + "/ca.crt";
    options.tls_require_client_cert = true;
    options.client_token_file = root_ + "/client.token";
    options.cluster_token_file = root_ + "/cluster.token";
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }

  void TearDown() override {
    if (cluster_ != nullptr) cluster_->Stop(absl::Seconds(30)).IgnoreError();
  }

  // `pstrain args...` against the cluster, with the CA, the client
  // certificate unless `with_certificate` is false, and `token` (a file
  // stem under root_).
  CommandRun Pstrain(std::vector<std::string> args, const std::string& token,
                     bool with_certificate = true) {
    absl::StatusOr<std::string> program = LocateBinary("pstrain", "");
    EXPECT_TRUE(program.ok()) << program.status();
    args.push_back("--coordinator_address=" + cluster_->coordinator().grpc_address);
    args.push_back("--tls_ca=" + root_ + "/ca.crt");
    if (with_certificate) {
      args.push_back("--tls_cert=" + root_ + "/client.crt");
      args.push_back("--tls_key=" + root_ + "/client.key");
    }
    args.push_back(absl::StrCat("--client_token_file=", root_, "/", token, ".token"));
    return RunProgram(program.ok() ? *program : "pstrain", args);
  }

  std::string WriteSpec(const std::string& name) {
    testing_jobs::ClicksJob job;
    job.name = name;
    job.model_dir = name;
    job.max_steps = 100;
    const std::string path = root_ + "/" + name + ".pbtxt";
    std::ofstream(path) << job.Text();
    return path;
  }

  std::string root_;
  std::unique_ptr<LocalCluster> cluster_;
};

TEST_F(SecurityTest, RightCredentialsRunAJobAndWrongOnesAreRefused) {
  // The right certificate and client token: the job runs to its end, its
  // daemons talking to each other over mutual TLS with the cluster token.
  CommandRun submitted = Pstrain({"submit", WriteSpec("secure"), "--output=json"}, "client");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  ASSERT_TRUE(absl::StrContains(submitted.output, "\"secure-1\"")) << submitted.output;
  CommandRun watched = Pstrain({"watch", "secure-1"}, "client");
  EXPECT_EQ(watched.exit_code, 0) << watched.output;
  EXPECT_TRUE(absl::StrContains(watched.output, "SUCCEEDED at step")) << watched.output;

  // No client certificate: refused at the handshake, so the coordinator
  // looks unreachable.
  CommandRun no_certificate = Pstrain({"status"}, "client", /*with_certificate=*/false);
  EXPECT_EQ(no_certificate.exit_code, 3) << no_certificate.output;
  EXPECT_TRUE(absl::StrContains(no_certificate.output, "cannot reach the coordinator"))
      << no_certificate.output;

  // A wrong token: UNAUTHENTICATED, said so, with the exit code of a
  // refusal.
  CommandRun wrong_token = Pstrain({"status"}, "wrong");
  EXPECT_EQ(wrong_token.exit_code, 5) << wrong_token.output;
  EXPECT_TRUE(absl::StrContains(wrong_token.output, "wrong bearer token")) << wrong_token.output;
  EXPECT_FALSE(absl::StrContains(wrong_token.output, kWrongToken)) << wrong_token.output;

  // The cluster token may read but not submit.
  CommandRun cluster_submit = Pstrain({"submit", WriteSpec("refused")}, "cluster");
  EXPECT_EQ(cluster_submit.exit_code, 5) << cluster_submit.output;
  EXPECT_TRUE(absl::StrContains(cluster_submit.output, "cluster token cannot"))
      << cluster_submit.output;
  CommandRun cluster_read = Pstrain({"list"}, "cluster");
  EXPECT_EQ(cluster_read.exit_code, 0) << cluster_read.output;

  // The coordinator logged each refusal with method and peer, never a token.
  const std::string log = ReadFile(cluster_->coordinator().log_path);
  EXPECT_TRUE(absl::StrContains(log, "refused /pstrain.JobService/SubmitJob")) << log;
  EXPECT_TRUE(absl::StrContains(log, "wrong bearer token")) << log;
  for (const char* token : {kClientToken, kClusterToken, kWrongToken}) {
    EXPECT_FALSE(absl::StrContains(log, token)) << token;
  }
}

}  // namespace
}  // namespace pstrain
