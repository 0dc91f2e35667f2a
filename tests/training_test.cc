// Distributed training end to end: a coordinator, parameter servers,
// workers and an evaluator as real processes on loopback train a real model
// on the real Fashion-MNIST and end the job cleanly.

#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "client/binary_locator.h"
#include "client/local_cluster.h"
#include "common/config/job_spec_parser.h"
#include "common/process/child_process.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace {

// Every wait of the test has this deadline; past it the test fails with
// the job's last status instead of hanging.
constexpr absl::Duration kJobDeadline = absl::Minutes(4);

class TrainingTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::TempDir() + "/training";
    ::mkdir(root_.c_str(), 0755);
    LocalClusterOptions options;
    options.num_ps = 2;
    options.num_workers = 2;
    options.run_dir = root_ + "/run";
    options.checkpoint_root = root_;
    absl::StatusOr<std::unique_ptr<LocalCluster>> cluster = LocalCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    jobs_ = JobService::NewStub(grpc::CreateChannel(cluster_->coordinator().grpc_address,
                                                    grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (cluster_ != nullptr) {
      absl::Status stopped = cluster_->Stop(absl::Seconds(30));
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
  }

  std::string Submit(const std::string& spec_text) {
    absl::StatusOr<JobSpec> spec = ParseJobSpecText(spec_text, "test job");
    EXPECT_TRUE(spec.ok()) << spec.status();
    SubmitJobRequest request;
    *request.mutable_spec() = *spec;
    SubmitJobResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    grpc::Status status = jobs_->SubmitJob(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.job_id();
  }

  // Follows the job's events until it ends; returns its final status.
  JobStatus WatchUntilEnd(const std::string& job_id) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kJobDeadline));
    WatchJobRequest request;
    request.set_job_id(job_id);
    auto stream = jobs_->WatchJob(&context, request);
    JobStatus last;
    JobEvent event;
    while (stream->Read(&event)) {
      if (event.has_status()) last = event.status();
    }
    grpc::Status status = stream->Finish();
    EXPECT_TRUE(status.ok()) << "watch ended with " << status.error_message()
                             << "; last status: " << last.ShortDebugString();
    // The stream's last status may precede the final one by a hair.
    grpc::ClientContext get_context;
    get_context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    GetJobRequest get;
    get.set_job_id(job_id);
    JobStatus final_status;
    EXPECT_TRUE(jobs_->GetJob(&get_context, get, &final_status).ok());
    return final_status;
  }

  std::string root_;
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<JobService::Stub> jobs_;
};

TEST_F(TrainingTest, SyncMlpOnFashionMnistSucceedsWithAFinalEvaluation) {
  const std::string job_id = Submit(R"pb(
    name: "fashion-mnist-mlp-sync"
    mode: JOB_MODE_TRAIN_AND_EVAL
    model { mlp { hidden_units: [ 256, 128 ] } }
    train_data {
      fashion_mnist {}
      batch_size: 128
    }
    eval_data {
      fashion_mnist {}
      batch_size: 1000
    }
    optimizer {
      adam {}
      learning_rate: 0.001
    }
    training { update_mode: UPDATE_MODE_SYNC steps_per_loop: 50 }
    stop { max_steps: 1000 }
    checkpoint { model_dir: "fashion_mnist_mlp_sync" every_steps: 500 }
    eval { throttle_secs: 0 }
  )pb");
  ASSERT_FALSE(job_id.empty());
  JobStatus status = WatchUntilEnd(job_id);
  EXPECT_EQ(status.state(), JOB_STATE_SUCCEEDED) << status.ShortDebugString();
  EXPECT_EQ(status.stop_reason(), STOP_REASON_MAX_STEPS) << status.reason();
  EXPECT_EQ(status.global_step(), 1000);
  // The final checkpoint is evaluated before the job is done.
  EXPECT_EQ(status.last_eval_step(), status.global_step()) << status.ShortDebugString();
  ASSERT_TRUE(status.last_eval_metrics().contains("accuracy")) << status.ShortDebugString();
  EXPECT_GE(status.last_eval_metrics().at("accuracy"), 0.84) << status.ShortDebugString();
  EXPECT_TRUE(cluster_->CheckHealthy().ok());

  // The same processes take the next job: async logistic regression on
  // synthetic click logs.
  const std::string second = Submit(R"pb(
    name: "clicks-logistic-async"
    mode: JOB_MODE_TRAIN
    model { logistic_regression {} }
    train_data {
      synthetic_clicks { num_examples: 20000 }
      batch_size: 256
    }
    optimizer {
      adagrad {}
      learning_rate: 0.1
    }
    training { update_mode: UPDATE_MODE_ASYNC steps_per_loop: 20 }
    stop { max_steps: 200 }
    checkpoint { model_dir: "clicks_logistic_async" }
  )pb");
  JobStatus second_status = WatchUntilEnd(second);
  EXPECT_EQ(second_status.state(), JOB_STATE_SUCCEEDED) << second_status.ShortDebugString();
  EXPECT_GE(second_status.global_step(), 200);
}

std::string RunPstrain(const std::vector<std::string>& args, ExitStatus* exit) {
  absl::StatusOr<std::string> program = LocateBinary("pstrain", "");
  EXPECT_TRUE(program.ok()) << program.status();
  const std::string log = testing::TempDir() + "/pstrain_local.out";
  std::remove(log.c_str());
  auto child = ChildProcess::Start({*program, args, {}, log});
  EXPECT_TRUE(child.ok()) << child.status();
  absl::StatusOr<ExitStatus> status = (*child)->Wait(kJobDeadline);
  EXPECT_TRUE(status.ok()) << status.status();
  if (status.ok()) *exit = *status;
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  return output.str();
}

// The README's main command, on a small job: the whole cluster, the job's
// progress and final metrics, and every process gone at the end.
TEST(PstrainLocalJobTest, RunsAJobToItsEndAndPrintsTheFinalMetrics) {
  const std::string root = testing::TempDir() + "/pstrain_local";
  ::mkdir(root.c_str(), 0755);
  const std::string spec_path = root + "/clicks.pbtxt";
  std::ofstream(spec_path) << R"pb(
    name: "clicks"
    mode: JOB_MODE_TRAIN_AND_EVAL
    model { logistic_regression {} }
    train_data {
      synthetic_clicks { num_examples: 20000 seed: 3 }
      batch_size: 256
    }
    eval_data {
      synthetic_clicks { num_examples: 5000 seed: 3 }
      batch_size: 1000
    }
    optimizer {
      adagrad {}
      learning_rate: 0.1
    }
    training { steps_per_loop: 25 }
    stop { max_steps: 150 }
    eval {
      metrics: [ "loss", "auc" ]
      throttle_secs: 0
    }
    checkpoint { model_dir: "clicks" }
  )pb";
  ExitStatus exit;
  const std::string output = RunPstrain(
      {"local", spec_path, "--checkpoint_root=" + root, "--run_dir=" + root + "/run"}, &exit);
  EXPECT_EQ(exit.exit_code, 0) << output;
  for (const char* expected :
       {"Every process answers its health check (SERVING).", "submitted job clicks-1",
        "step 150/150", "SUCCEEDED", "final evaluation (step", "auc ",
        "Every process exited cleanly (exit code 0)."}) {
    EXPECT_NE(output.find(expected), std::string::npos) << expected << " in:\n" << output;
  }

  // The same job again resumes from its model_dir, which already holds the
  // final checkpoint: it ends at once, evaluated, instead of training on or
  // waiting forever for an evaluation.
  const std::string again = RunPstrain(
      {"local", spec_path, "--checkpoint_root=" + root, "--run_dir=" + root + "/run-again"}, &exit);
  EXPECT_EQ(exit.exit_code, 0) << again;
  EXPECT_NE(again.find("SUCCEEDED"), std::string::npos) << again;
  EXPECT_NE(again.find("final evaluation (step"), std::string::npos) << again;

  // An invalid spec is refused naming the field, and exits 2.
  std::ofstream(spec_path) << R"pb(
    model { mlp {} }
    train_data { fashion_mnist {} }
    optimizer { learning_rate: -1 }
    stop { max_steps: 10 }
    checkpoint { model_dir: "bad" }
  )pb";
  const std::string refused = RunPstrain(
      {"local", spec_path, "--checkpoint_root=" + root, "--run_dir=" + root + "/run2"}, &exit);
  EXPECT_EQ(exit.exit_code, 2) << refused;
  EXPECT_NE(refused.find("optimizer.learning_rate must be > 0, got -1"), std::string::npos)
      << refused;
}

}  // namespace
}  // namespace pstrain
