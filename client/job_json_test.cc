#include "client/job_json.h"

#include <cmath>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace pstrain {
namespace {

google::protobuf::Struct Parse(const std::string& json) {
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  return parsed;
}

JobStatus FinishedJob() {
  JobStatus status;
  status.set_job_id("clicks-1");
  status.set_state(JOB_STATE_SUCCEEDED);
  status.set_stop_reason(STOP_REASON_MAX_STEPS);
  status.set_global_step(150);
  status.set_examples_per_sec(12345.5);
  status.set_loss(0.61);
  (*status.mutable_last_eval_metrics())["auc"] = 0.91;
  (*status.mutable_last_eval_metrics())["loss"] = 0.55;
  status.mutable_spec()->mutable_checkpoint()->set_model_dir("clicks \"quoted\"");
  return status;
}

TEST(JobJsonTest, StatusHasTheKeysScriptsReadAtTheTopLevel) {
  const auto fields = Parse(JobStatusJson(FinishedJob())).fields();
  EXPECT_EQ(fields.at("state").string_value(), "SUCCEEDED");
  EXPECT_EQ(fields.at("stop_reason").string_value(), "MAX_STEPS");
  EXPECT_EQ(fields.at("global_step").number_value(), 150);
  EXPECT_EQ(fields.at("examples_per_sec").number_value(), 12345.5);
  EXPECT_EQ(fields.at("auc").number_value(), 0.91);
  // "loss" is the eval metric; the training loss has its own name.
  EXPECT_EQ(fields.at("loss").number_value(), 0.55);
  EXPECT_EQ(fields.at("train_loss").number_value(), 0.61);
  EXPECT_EQ(fields.at("eval_metrics").struct_value().fields().at("auc").number_value(), 0.91);
  EXPECT_EQ(fields.at("model_dir").string_value(), "clicks \"quoted\"");
}

TEST(JobJsonTest, ADivergedLossIsNullNotInvalidJson) {
  JobStatus status = FinishedJob();
  status.set_loss(std::nan(""));
  const auto fields = Parse(JobStatusJson(status)).fields();
  EXPECT_EQ(fields.at("train_loss").kind_case(), google::protobuf::Value::kNullValue);
}

TEST(JobJsonTest, AFailedCheckpointIsAnEventOfItsOwnAndCountedInTheStatus) {
  JobEvent event;
  event.set_unix_ms(5000);
  CheckpointFailure* failure = event.mutable_checkpoint_failure();
  failure->set_step(600);
  failure->set_message("No space left on device");
  failure->set_consecutive_failures(2);
  failure->set_max_consecutive_failures(3);
  const auto fields = Parse(JobEventJson(event)).fields();
  EXPECT_EQ(fields.at("event").string_value(), "checkpoint_failure");
  EXPECT_EQ(fields.at("step").number_value(), 600);
  EXPECT_EQ(fields.at("message").string_value(), "No space left on device");
  EXPECT_EQ(fields.at("consecutive_failures").number_value(), 2);
  EXPECT_EQ(fields.at("max_consecutive_failures").number_value(), 3);
  EXPECT_FALSE(fields.at("final").bool_value());

  JobStatus status = FinishedJob();
  status.set_checkpoint_failures(4);
  status.set_last_checkpoint_failure("ckpt-600 (2 in a row of at most 3): No space left on device");
  const auto status_fields = Parse(JobStatusJson(status)).fields();
  EXPECT_EQ(status_fields.at("checkpoint_failures").number_value(), 4);
  EXPECT_EQ(status_fields.at("last_checkpoint_failure").string_value(),
            "ckpt-600 (2 in a row of at most 3): No space left on device");
}

TEST(JobJsonTest, ListAndClusterAreObjectsWithArrays) {
  ListJobsResponse jobs;
  *jobs.add_jobs() = FinishedJob();
  *jobs.add_jobs() = FinishedJob();
  EXPECT_EQ(Parse(JobListJson(jobs)).fields().at("jobs").list_value().values_size(), 2);

  ClusterStatus cluster;
  cluster.set_running_job_id("clicks-1");
  Member* ps = cluster.add_members();
  ps->mutable_task()->set_type(TASK_TYPE_PS);
  ps->mutable_task()->set_index(1);
  ps->set_incarnation(18446744073709551615u);
  ps->set_state(MEMBER_STATE_BUSY);
  ps->set_last_heartbeat_unix_ms(10'000);
  ps->set_step(42);
  ps->set_queue_depth(3);
  const auto fields = Parse(ClusterJson(cluster, absl::FromUnixMillis(12'500))).fields();
  const auto& member = fields.at("members").list_value().values(0).struct_value().fields();
  EXPECT_EQ(member.at("role").string_value(), "ps");
  EXPECT_EQ(member.at("index").number_value(), 1);
  EXPECT_EQ(member.at("incarnation").string_value(), "18446744073709551615");
  EXPECT_EQ(member.at("state").string_value(), "BUSY");
  EXPECT_EQ(member.at("heartbeat_age_secs").number_value(), 2.5);
  EXPECT_EQ(member.at("step").number_value(), 42);
  EXPECT_EQ(member.at("queue_depth").number_value(), 3);
}

}  // namespace
}  // namespace pstrain
