#include "bench/common/job_submission.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace bench {
namespace {

// Accepts a job named "ok" as "job-7" and refuses every other name.
class FakeJobService : public JobService::Service {
 public:
  grpc::Status SubmitJob(grpc::ServerContext*, const SubmitJobRequest* request,
                         SubmitJobResponse* response) override {
    if (request->spec().name() != "ok") {
      return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, "a job of that name runs");
    }
    response->set_job_id("job-7");
    return grpc::Status::OK;
  }
};

class SubmitJobSpecTest : public testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port, 0);
    jobs_ = JobService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  }
  void TearDown() override { server_->Shutdown(); }

  FakeJobService service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<JobService::Stub> jobs_;
};

TEST_F(SubmitJobSpecTest, ReturnsTheJobId) {
  absl::StatusOr<std::string> id = SubmitJobSpec(*jobs_, "name: \"ok\"", absl::Seconds(30));
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, "job-7");
}

TEST_F(SubmitJobSpecTest, PassesTheCoordinatorsRefusalOn) {
  absl::StatusOr<std::string> id = SubmitJobSpec(*jobs_, "name: \"other\"", absl::Seconds(30));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(id.status().message().find("submitting the job: a job of that name runs"),
            std::string::npos)
      << id.status();
}

TEST_F(SubmitJobSpecTest, RefusesTextThatIsNotAJobSpec) {
  absl::StatusOr<std::string> id = SubmitJobSpec(*jobs_, "no_such_field: 3", absl::Seconds(30));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(id.status().message().find("no_such_field: 3"), std::string::npos) << id.status();
}

}  // namespace
}  // namespace bench
}  // namespace pstrain
