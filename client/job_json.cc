#include "client/job_json.h"

#include <cmath>
#include <string>

#include "client/enum_names.h"
#include "glog/logging.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace pstrain {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

// JSON has no NaN or infinity (a diverged loss): those become null.
Value Number(double value) {
  Value v;
  if (std::isfinite(value)) {
    v.set_number_value(value);
  } else {
    v.set_null_value(google::protobuf::NULL_VALUE);
  }
  return v;
}

Value Text(const std::string& value) {
  Value v;
  v.set_string_value(value);
  return v;
}

Value Object(Struct fields) {
  Value v;
  *v.mutable_struct_value() = std::move(fields);
  return v;
}

// Struct's JSON writer escapes strings correctly and writes each number in
// the shortest form that reads back the same. Steps are below 2^53, so a
// double holds them exactly.
std::string ToJson(const Struct& object) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  // Cannot fail: Number() keeps NaN and infinity, which the writer
  // refuses, out of every Struct.
  CHECK(google::protobuf::util::MessageToJsonString(object, &json, options).ok());
  return json;
}

Struct JobStatusObject(const JobStatus& status) {
  Struct object;
  auto& fields = *object.mutable_fields();
  fields["job_id"] = Text(status.job_id());
  fields["name"] = Text(status.name());
  fields["state"] = Text(JobStateName(status.state()));
  fields["stop_reason"] = Text(StopReasonName(status.stop_reason()));
  fields["reason"] = Text(status.reason());
  fields["global_step"] = Number(status.global_step());
  fields["max_steps"] = Number(status.spec().stop().max_steps());
  fields["examples_per_sec"] = Number(status.examples_per_sec());
  fields["train_loss"] = Number(status.loss());
  fields["last_eval_step"] = Number(status.last_eval_step());
  fields["model_dir"] = Text(status.spec().checkpoint().model_dir());
  fields["export_path"] = Text(status.export_path());
  fields["checkpoint_failures"] = Number(status.checkpoint_failures());
  fields["last_checkpoint_failure"] = Text(status.last_checkpoint_failure());
  Struct metrics;
  for (const auto& [name, value] : status.last_eval_metrics()) {
    (*metrics.mutable_fields())[name] = Number(value);
    // Top level too, after the fixed keys: `jq .accuracy` is what scripts
    // want, and a metric is what "loss" means at this level.
    fields[name] = Number(value);
  }
  fields["eval_metrics"] = Object(std::move(metrics));
  return object;
}

}  // namespace

std::string JobStatusJson(const JobStatus& status) { return ToJson(JobStatusObject(status)); }

std::string JobListJson(const ListJobsResponse& jobs) {
  Struct object;
  ListValue* list = (*object.mutable_fields())["jobs"].mutable_list_value();
  for (const JobStatus& job : jobs.jobs()) *list->add_values() = Object(JobStatusObject(job));
  return ToJson(object);
}

std::string ClusterJson(const ClusterStatus& cluster, absl::Time now) {
  Struct object;
  auto& fields = *object.mutable_fields();
  fields["running_job_id"] = Text(cluster.running_job_id());
  fields["queued_jobs"] = Number(cluster.queued_jobs());
  ListValue* list = fields["members"].mutable_list_value();
  for (const Member& member : cluster.members()) {
    Struct m;
    auto& f = *m.mutable_fields();
    f["role"] = Text(TaskRoleName(member.task().type()));
    f["index"] = Number(member.task().index());
    f["address"] = Text(member.address());
    // As a string: incarnations are random 64-bit numbers, beyond what a
    // JSON number holds exactly.
    f["incarnation"] = Text(std::to_string(member.incarnation()));
    f["state"] = Text(MemberStateName(member.state()));
    f["health"] = Text(MemberHealthName(member.health()));
    f["health_detail"] = Text(member.health_detail());
    f["heartbeat_age_secs"] =
        Number(absl::ToDoubleSeconds(now - absl::FromUnixMillis(member.last_heartbeat_unix_ms())));
    f["step"] = Number(member.step());
    f["queue_depth"] = Number(member.queue_depth());
    f["job_id"] = Text(member.job_id());
    f["metrics_address"] = Text(member.metrics_address());
    *list->add_values() = Object(std::move(m));
  }
  return ToJson(object);
}

std::string JobEventJson(const JobEvent& event) {
  Struct object;
  if (event.has_status()) object = JobStatusObject(event.status());
  auto& fields = *object.mutable_fields();
  fields["unix_ms"] = Number(event.unix_ms());
  if (event.has_progress()) {
    fields["event"] = Text("progress");
    fields["global_step"] = Number(event.progress().global_step());
    fields["train_loss"] = Number(event.progress().loss());
    fields["examples_per_sec"] = Number(event.progress().examples_per_sec());
    fields["epoch"] = Number(event.progress().epoch());
  } else if (event.has_checkpoint()) {
    fields["event"] = Text("checkpoint");
    fields["step"] = Number(event.checkpoint().step());
    fields["path"] = Text(event.checkpoint().path());
    fields["final"].set_bool_value(event.checkpoint().final());
  } else if (event.has_checkpoint_failure()) {
    const CheckpointFailure& failure = event.checkpoint_failure();
    fields["event"] = Text("checkpoint_failure");
    fields["step"] = Number(failure.step());
    fields["message"] = Text(failure.message());
    fields["consecutive_failures"] = Number(failure.consecutive_failures());
    fields["max_consecutive_failures"] = Number(failure.max_consecutive_failures());
    fields["final"].set_bool_value(failure.final());
  } else if (event.has_eval()) {
    fields["event"] = Text("eval");
    fields["checkpoint_step"] = Number(event.eval().checkpoint_step());
    fields["is_best"].set_bool_value(event.eval().is_best());
    fields["final"].set_bool_value(event.eval().final());
    for (const auto& [name, value] : event.eval().metrics()) fields[name] = Number(value);
  } else if (event.has_status()) {
    fields["event"] = Text("status");
  }
  return ToJson(object);
}

}  // namespace pstrain
