#include "server/console/console_api.h"

#include <functional>
#include <memory>
#include <string>

#include "common/metrics/metrics_exposer.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/coordinator/testing/in_process_coordinator.h"

namespace pstrain {
namespace console {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

template <typename T>
T FromJson(const std::string& json) {
  T message;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &message).ok()) << json;
  return message;
}

HttpRequest Request(const std::string& method, const std::string& path,
                    std::map<std::string, std::string> query = {}) {
  HttpRequest request;
  request.method = method;
  request.path = path;
  request.query = std::move(query);
  return request;
}

class ConsoleApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator::CoordinatorOptions options;
    options.checkpoint_root = ::testing::TempDir() + "/console_api";
    cluster_ = std::make_unique<coordinator::InProcessCoordinator>(options);
  }

  ConsoleApi Api(ConsoleApiOptions options = {}) {
    return ConsoleApi(cluster_->coordinator(), *tokens_, std::move(options));
  }

  std::string SubmitJob() {
    absl::StatusOr<std::string> job = cluster_->SubmitTrainingJob({"console_job"});
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : "";
  }

  // No tokens unless the test sets them.
  std::optional<TokenAuthenticator> tokens_{std::in_place, "", ""};
  std::unique_ptr<coordinator::InProcessCoordinator> cluster_;
};

// The job moves on while the test reads (its reason, its wait's age): an
// answer is compared with what the coordinator says just before and just
// after, once those two agree.
template <typename T>
void ExpectAnswerIs(const ConsoleApi& api, const std::string& path,
                    const std::function<T()>& coordinator_says) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const T before = coordinator_says();
    HttpResponse answer = api.Answer(Request("GET", path));
    const T after = coordinator_says();
    if (!MessageDifferencer::Equals(before, after)) continue;
    ASSERT_EQ(answer.status, 200) << answer.body;
    EXPECT_EQ(answer.content_type, "application/json");
    EXPECT_TRUE(MessageDifferencer::Equals(FromJson<T>(answer.body), before))
        << path << ": " << answer.body;
    return;
  }
  ADD_FAILURE() << "the coordinator's answer for " << path << " never held still";
}

TEST_F(ConsoleApiTest, JobsAndClusterAreTheJobServiceMessagesAsJson) {
  const std::string job_id = SubmitJob();
  ConsoleApi api = Api();
  coordinator::Coordinator& coordinator = cluster_->coordinator();
  ExpectAnswerIs<ListJobsResponse>(api, "/api/jobs", [&] { return *coordinator.ListJobs({}); });
  ExpectAnswerIs<JobStatus>(api, "/api/jobs/" + job_id,
                            [&] { return *coordinator.GetJob(job_id); });
  ExpectAnswerIs<ClusterStatus>(api, "/api/cluster", [&] { return coordinator.GetCluster(); });

  // Field names as in the .proto, int64 as strings, enums by name.
  const std::string jobs = api.Answer(Request("GET", "/api/jobs")).body;
  EXPECT_THAT(jobs, HasSubstr("\"job_id\":\"" + job_id + "\""));
  EXPECT_THAT(jobs, HasSubstr("\"global_step\":\"0\""));
  EXPECT_THAT(jobs, HasSubstr("\"state\":\"JOB_STATE_"));
  EXPECT_THAT(api.Answer(Request("GET", "/api/cluster")).body,
              HasSubstr("\"type\":\"TASK_TYPE_PS\""));
}

TEST_F(ConsoleApiTest, EventsComeFromTheJobsSubmitOnAndThenOnlyWhatIsNew) {
  const std::string job_id = SubmitJob();
  ConsoleApi api = Api();
  HttpResponse first = api.Answer(Request("GET", "/api/jobs/" + job_id + "/events"));
  ASSERT_EQ(first.status, 200) << first.body;
  google::protobuf::Struct read = FromJson<google::protobuf::Struct>(first.body);
  const auto& events = read.fields().at("events").list_value().values();
  ASSERT_GE(events.size(), 1);
  std::string event_json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(events[0], &event_json).ok());
  EXPECT_EQ(FromJson<JobEvent>(event_json).status().state(), JOB_STATE_QUEUED);
  const std::string next = read.fields().at("next").string_value();
  EXPECT_EQ(next, std::to_string(events.size()));

  // Only what came after: as many events as the sequence moved on (the
  // job's reason may change meanwhile).
  HttpResponse more =
      api.Answer(Request("GET", "/api/jobs/" + job_id + "/events", {{"after", next}}));
  ASSERT_EQ(more.status, 200) << more.body;
  google::protobuf::Struct newer = FromJson<google::protobuf::Struct>(more.body);
  const int64_t moved = std::stoll(newer.fields().at("next").string_value()) - std::stoll(next);
  EXPECT_GE(moved, 0);
  EXPECT_EQ(newer.fields().at("events").list_value().values_size(), moved);
}

TEST_F(ConsoleApiTest, BadRequestsGetAStatusAndAMessageNamingWhatIsWrong) {
  SubmitJob();
  ConsoleApi api = Api();
  const struct {
    HttpRequest request;
    int status;
    const char* message;
  } cases[] = {
      {Request("GET", "/api/jobs/no-such-job"), 404, "no-such-job"},
      {Request("GET", "/api/jobs/no-such-job/events"), 404, "no-such-job"},
      {Request("GET", "/api/jobs", {{"state", "SLEEPING"}}), 400, "unknown job state 'SLEEPING'"},
      {Request("GET", "/api/jobs", {{"limit", "ten"}}), 400, "limit must be a whole number"},
      {Request("GET", "/api/jobs/x/events", {{"after", "-1"}}), 400, "after"},
      {Request("GET", "/api/nothing"), 404, "no endpoint /api/nothing"},
      {Request("DELETE", "/api/jobs"), 405, "answers GET"},
      {Request("GET", "/api/members/cook/0/metrics"), 400, "no member cook/0"},
      {Request("GET", "/api/members/worker/7/metrics"), 404, "no member worker/7"},
  };
  for (const auto& c : cases) {
    HttpResponse response = api.Answer(c.request);
    EXPECT_EQ(response.status, c.status) << c.request.path << ": " << response.body;
    EXPECT_THAT(
        FromJson<google::protobuf::Struct>(response.body).fields().at("error").string_value(),
        HasSubstr(c.message))
        << c.request.path;
  }
}

TEST_F(ConsoleApiTest, FiltersJobsByStateAndLimit) {
  SubmitJob();
  ConsoleApi api = Api();
  HttpResponse none = api.Answer(Request("GET", "/api/jobs", {{"state", "succeeded,FAILED"}}));
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(FromJson<ListJobsResponse>(none.body).jobs_size(), 0);
  HttpResponse one = api.Answer(Request("GET", "/api/jobs", {{"limit", "1"}}));
  EXPECT_EQ(FromJson<ListJobsResponse>(one.body).jobs_size(), 1);
}

TEST_F(ConsoleApiTest, WithAClientTokenEveryEndpointButTheConsolesOwnNeedsIt) {
  tokens_.emplace("client-secret", "cluster-secret");
  const std::string job_id = SubmitJob();
  ConsoleApi api = Api();
  HttpResponse info = api.Answer(Request("GET", "/api/console"));
  ASSERT_EQ(info.status, 200);
  EXPECT_TRUE(
      FromJson<google::protobuf::Struct>(info.body).fields().at("auth_required").bool_value());

  for (const std::string& path : {std::string("/api/jobs"), "/api/jobs/" + job_id,
                                  std::string("/api/cluster"), "/api/jobs/" + job_id + "/events"}) {
    HttpRequest request = Request("GET", path);
    EXPECT_EQ(api.Answer(request).status, 401) << path;
    request.headers["authorization"] = "Bearer guessed-xyz";
    EXPECT_EQ(api.Answer(request).status, 401) << path;
    request.headers["authorization"] = "Bearer client-secret";
    EXPECT_EQ(api.Answer(request).status, 200) << path;
  }
  // The token is never echoed.
  HttpRequest wrong = Request("GET", "/api/jobs");
  wrong.headers["authorization"] = "Bearer guessed-xyz";
  EXPECT_THAT(api.Answer(wrong).body, ::testing::Not(HasSubstr("guessed-xyz")));
}

TEST_F(ConsoleApiTest, AStopNeedsTheRightTheHeaderAndTheClientToken) {
  tokens_.emplace("client-secret", "cluster-secret");
  const std::string job_id = SubmitJob();
  HttpRequest stop = Request("POST", "/api/jobs/" + job_id + "/stop");
  stop.headers["authorization"] = "Bearer client-secret";
  stop.headers["x-pstrain-console"] = "stop";

  HttpResponse read_only = Api().Answer(stop);
  EXPECT_EQ(read_only.status, 403);
  EXPECT_THAT(read_only.body, HasSubstr("--console_stop"));

  ConsoleApiOptions options;
  options.allow_stop = true;
  ConsoleApi api = Api(options);
  HttpRequest without_header = stop;
  without_header.headers.erase("x-pstrain-console");
  EXPECT_EQ(api.Answer(without_header).status, 403);
  HttpRequest cluster_token = stop;
  cluster_token.headers["authorization"] = "Bearer cluster-secret";
  EXPECT_EQ(api.Answer(cluster_token).status, 403);
  EXPECT_EQ(cluster_->coordinator().GetJob(job_id)->stop_reason(), STOP_REASON_UNSPECIFIED);

  HttpResponse stopped = api.Answer(stop);
  ASSERT_EQ(stopped.status, 200) << stopped.body;
  // A queued job ends STOPPED at once; a running one finishes first.
  const JobStatus answered = FromJson<StopJobResponse>(stopped.body).status();
  EXPECT_EQ(answered.stop_reason(), STOP_REASON_USER);
  EXPECT_THAT(answered.state(), ::testing::AnyOf(JOB_STATE_FINISHING, JOB_STATE_STOPPED));
  EXPECT_EQ(cluster_->coordinator().GetJob(job_id)->stop_reason(), STOP_REASON_USER);
}

TEST_F(ConsoleApiTest, AMembersMetricsAreReadThroughTheCoordinator) {
  auto registry = std::make_shared<prometheus::Registry>();
  absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer =
      MetricsExposer::Start("127.0.0.1:0", registry);
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  RegisterRequest worker;
  worker.mutable_task()->set_type(TASK_TYPE_WORKER);
  worker.mutable_task()->set_index(0);
  worker.set_incarnation(7);
  worker.set_metrics_address((*exposer)->address());
  ASSERT_TRUE(cluster_->coordinator().Register(worker).ok());

  HttpResponse page = Api().Answer(Request("GET", "/api/members/worker/0/metrics"));
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_THAT(page.body, HasSubstr("process_start_time_seconds"));

  exposer->reset();  // the member's endpoint is gone
  HttpResponse gone = Api().Answer(Request("GET", "/api/members/worker/0/metrics"));
  EXPECT_EQ(gone.status, 502);
  EXPECT_THAT(gone.body, HasSubstr("cannot read worker/0's metrics"));
}

}  // namespace
}  // namespace console
}  // namespace pstrain
