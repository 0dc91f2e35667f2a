// The coordinator's web console in a real browser: a local cluster of real
// processes under TLS and a client token trains Fashion-MNIST while
// headless Chromium (Debian's, driven by Playwright from
// tests/console/node_modules) loads its pages. The login asks for the
// token and keeps it out of the page; the job page's plots gain points
// while the job trains; the cluster page shows each worker's step phases;
// the final state and metrics appear when the job ends, with no console
// error anywhere; a second job is stopped from its page (the coordinator
// runs with --console_stop), after a confirmation. The JSON endpoints
// agree with `pstrain status --output=json`. Screenshots are kept in the test's outputs
// (bazel-testlogs/tests/console_test/test.outputs).

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/net/testing/https_get.h"
#include "common/process/child_process.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/cluster_fixture.h"
#include "tests/node_script.h"
#include "tests/pstrain_command.h"
#include "tests/test_certificates.h"

namespace pstrain {
namespace {

using ::testing::HasSubstr;

constexpr char kClientToken[] = "console-client-token-3e9a51";

// Fashion-MNIST's MLP for `seconds` in `model_dir`: 45 s are long enough
// for the browser to watch its curves grow on a loaded machine, with
// checkpoints and evaluations on the way.
std::string JobSpecText(int seconds = 45, const std::string& model_dir = "console_mlp") {
  return absl::StrCat(
      R"pb(
        name: "console-mlp"
        mode: JOB_MODE_TRAIN_AND_EVAL
        model {
          mlp {
            input_dim: 784
            num_classes: 10
            hidden_units: [ 128 ]
            activation: ACTIVATION_RELU
          }
        }
        train_data {
          fashion_mnist { dir: "/usr/share/datasets/fashion-mnist" split: DATA_SPLIT_TRAIN }
          batch_size: 128
          shuffle: true
        }
        eval_data {
          fashion_mnist { dir: "/usr/share/datasets/fashion-mnist" split: DATA_SPLIT_TEST }
          batch_size: 1000
        }
        optimizer {
          adam {}
          learning_rate: 0.001
          schedule { cosine { decay_steps: 20000 alpha: 0.1 } }
        }
        stop { max_seconds:)pb",
      seconds, R"pb(}
                    checkpoint { model_dir: ")pb",
      model_dir, R"pb(" every_seconds: 10 }
                      eval {
                        metrics: [ "loss", "accuracy" ]
                        best_metric: "accuracy"
                      }
      )pb");
}

std::string ReadFile(const std::string& path) {
  std::stringstream contents;
  contents << std::ifstream(path).rdbuf();
  return contents.str();
}

// The SHA-256 of the certificate's public key, base64: what Chromium's
// --ignore-certificate-errors-spki-list trusts.
std::string PublicKeyHash(const std::string& cert, const std::string& dir) {
  const std::string out = dir + "/spki.txt";
  absl::StatusOr<std::unique_ptr<ChildProcess>> shell = ChildProcess::Start(
      {"/bin/sh",
       {"-c", absl::StrCat("openssl x509 -in ", cert, " -pubkey -noout | openssl pkey -pubin ",
                           "-outform der | openssl dgst -sha256 -binary | base64 > ", out)},
       {},
       ""});
  EXPECT_TRUE(shell.ok()) << shell.status();
  if (!shell.ok()) return "";
  absl::StatusOr<ExitStatus> ended = (*shell)->Wait(absl::Seconds(30));
  EXPECT_TRUE(ended.ok() && ended->ok()) << "openssl could not hash " << cert;
  return std::string(absl::StripAsciiWhitespace(ReadFile(out)));
}

class ConsoleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTestFolder();
    ASSERT_NO_FATAL_FAILURE(MakeTestCertificates(root_));
    std::ofstream(root_ + "/client.token") << kClientToken << "\n";
    const char* kept = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
    screenshots_ = absl::StrCat(kept != nullptr ? kept : root_.c_str(), "/screenshots");
    LocalClusterOptions options;
    options.num_ps = 1;
    options.num_workers = 1;
    options.checkpoint_root = root_;
    options.tls_cert = root_ + "/server.crt";
    options.tls_key = root_ + "/server.key";
    options.tls_ca = root_ + "/ca.crt";
    options.client_token_file = root_ + "/client.token";
    // The console may stop jobs: its Stop button is tried too.
    options.task_flags["coordinator/0"] = {"--console_stop"};
    absl::StatusOr<std::unique_ptr<testing_cluster::TestCluster>> cluster =
        testing_cluster::TestCluster::Start("console", options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    spki_ = PublicKeyHash(root_ + "/server.crt", root_);
  }

  const std::string& console_address() { return cluster_->cluster().coordinator().metrics_address; }

  // The browser driver with `args` after the console's address, the job
  // and where screenshots go; what it printed, or why it failed.
  absl::StatusOr<std::string> Browse(const std::string& job_id, std::vector<std::string> args) {
    NodeScript driver;
    driver.script = "tests/console/console_browser.js";
    driver.node_modules_repository = "playwright_core";
    driver.required_package = "playwright-core";
    driver.timeout = absl::Minutes(7);
    // Node's own requests to the console trust the test's CA.
    driver.env = {absl::StrCat("NODE_EXTRA_CA_CERTS=", root_, "/ca.crt")};
    args.insert(args.begin(),
                {cluster_->cluster().console_url(), "--job=" + job_id, "--out=" + screenshots_,
                 "--spki=" + spki_, absl::StrCat("--token=", kClientToken)});
    args[0] = "--url=" + args[0];
    return RunNodeScript(driver, args);
  }

  // Submits `spec` and waits until the job has trained a step; its id, or
  // why not.
  absl::StatusOr<std::string> SubmitAndAwaitTraining(const std::string& spec) {
    absl::StatusOr<std::string> job_id = cluster_->Submit(spec);
    if (!job_id.ok()) return job_id.status();
    absl::StatusOr<JobStatus> training =
        cluster_->AwaitStatus(*job_id, [](const JobStatus& job) { return job.global_step() > 0; });
    if (!training.ok()) return training.status();
    return job_id;
  }

  // GET on the console over HTTPS with the client token; the body of a 200.
  std::string ApiGet(const std::string& target) {
    absl::StatusOr<HttpsAnswer> answer =
        HttpsGet(console_address(), target, root_ + "/ca.crt",
                 {absl::StrCat("Authorization: Bearer ", kClientToken)});
    EXPECT_TRUE(answer.ok()) << answer.status();
    if (!answer.ok()) return "";
    EXPECT_EQ(answer->status, 200) << target << ": " << answer->body;
    return answer->body;
  }

  std::string root_;
  std::string screenshots_;
  std::string spki_;
  std::unique_ptr<testing_cluster::TestCluster> cluster_;
};

TEST_F(ConsoleTest, FollowsAJobInChromiumAndAgreesWithTheCli) {
  absl::StatusOr<std::string> job_id = SubmitAndAwaitTraining(JobSpecText());
  ASSERT_TRUE(job_id.ok()) << job_id.status();

  // While it trains: the live pages, first, while the job has time left.
  absl::StatusOr<std::string> running = Browse(*job_id, {"--phase=running"});
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_THAT(*running, HasSubstr("ok: the job page plots the training loss as the job runs"));
  std::cout << *running;

  const testing_cluster::JobRecord record = cluster_->Follow(*job_id);
  ASSERT_EQ(record.final_status.state(), JOB_STATE_SUCCEEDED) << record.final_status.reason();

  // Once it ended: the login, then the final state.
  absl::StatusOr<std::string> ended =
      Browse(*job_id, {"--expect_auth", "--phase=ended", "--metric=accuracy"});
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_THAT(*ended, HasSubstr("ok: a wrong token is refused in the form"));
  EXPECT_THAT(*ended, HasSubstr("ok: the job page shows the final state"));
  std::cout << *ended;

  // The endpoint's JobStatus and the CLI's flat JSON say the same.
  JobStatus api;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(ApiGet("/api/jobs/" + *job_id), &api).ok());
  ExitStatus exit;
  const std::string printed = RunPstrain(
      {"status", *job_id, "--output=json",
       "--coordinator_address=" + cluster_->cluster().coordinator().grpc_address,
       "--tls_ca=" + root_ + "/ca.crt", "--client_token_file=" + root_ + "/client.token"},
      &exit);
  ASSERT_TRUE(exit.ok()) << printed;
  google::protobuf::Struct cli;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(printed, &cli).ok()) << printed;
  const auto& fields = cli.fields();
  EXPECT_EQ("JOB_STATE_" + fields.at("state").string_value(), JobState_Name(api.state()));
  EXPECT_EQ(fields.at("job_id").string_value(), api.job_id());
  EXPECT_EQ(fields.at("global_step").number_value(), api.global_step());
  EXPECT_EQ(fields.at("last_eval_step").number_value(), api.last_eval_step());
  EXPECT_DOUBLE_EQ(fields.at("train_loss").number_value(), api.loss());
  EXPECT_DOUBLE_EQ(fields.at("examples_per_sec").number_value(), api.examples_per_sec());
  EXPECT_EQ(fields.at("export_path").string_value(), api.export_path());
  EXPECT_EQ(fields.at("model_dir").string_value(), api.spec().checkpoint().model_dir());
  ASSERT_EQ(fields.at("eval_metrics").struct_value().fields_size(), api.last_eval_metrics_size());
  for (const auto& [name, value] : api.last_eval_metrics()) {
    EXPECT_DOUBLE_EQ(fields.at("eval_metrics").struct_value().fields().at(name).number_value(),
                     value)
        << name;
  }
  EXPECT_GT(api.last_eval_metrics().at("accuracy"), 0.7);

  // The events the plots are drawn from: every progress report of the run,
  // thinned at most, in step order, each with the schedule's learning rate.
  google::protobuf::Struct events;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  ApiGet("/api/jobs/" + *job_id + "/events"), &events)
                  .ok());
  double last_step = -1;
  int progress = 0;
  for (const auto& value : events.fields().at("events").list_value().values()) {
    const auto& event = value.struct_value().fields();
    if (event.count("progress") == 0) continue;
    const auto& point = event.at("progress").struct_value().fields();
    const double step = std::stod(point.at("global_step").string_value());
    EXPECT_GT(step, last_step);
    EXPECT_GT(point.at("learning_rate").number_value(), 0);
    last_step = step;
    ++progress;
  }
  EXPECT_GE(progress, 5);

  // Another job, stopped from its page.
  absl::StatusOr<std::string> stopped = SubmitAndAwaitTraining(JobSpecText(600, "console_stop"));
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  absl::StatusOr<std::string> stop = Browse(*stopped, {"--phase=stop"});
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_THAT(*stop, HasSubstr("ok: once confirmed, the job ends STOPPED"));
  std::cout << *stop;
  EXPECT_EQ(cluster_->Follow(*stopped).final_status.state(), JOB_STATE_STOPPED);
}

}  // namespace
}  // namespace pstrain
