#include "server/console/console_api.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/config/tf_config.h"
#include "common/net/http_get.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace pstrain {
namespace console {
namespace {

constexpr absl::string_view kApi = "/api/";

// What the status's code asks the caller to do, as HTTP says it.
int HttpStatusOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  // Only a message holding invalid UTF-8 fails to print; say so rather
  // than answer half a document.
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
    return absl::StrCat("{\"error\": \"cannot print ", message.GetTypeName(), " as JSON\"}");
  }
  return json;
}

HttpResponse Error(int status, absl::string_view message) {
  google::protobuf::Struct error;
  (*error.mutable_fields())["error"].set_string_value(std::string(message));
  HttpResponse response = HttpResponse::Json(status, ToJson(error));
  response.headers.push_back({"Cache-Control", "no-store"});
  return response;
}

HttpResponse ErrorOf(const absl::Status& status) {
  return Error(HttpStatusOf(status), status.message());
}

HttpResponse Json(const google::protobuf::Message& message) {
  HttpResponse response = HttpResponse::Json(200, ToJson(message));
  response.headers.push_back({"Cache-Control", "no-store"});
  return response;
}

template <typename T>
HttpResponse JsonOr(const absl::StatusOr<T>& result) {
  return result.ok() ? Json(*result) : ErrorOf(result.status());
}

// "RUNNING" or "JOB_STATE_RUNNING", any case.
absl::StatusOr<JobState> JobStateFromName(absl::string_view name) {
  std::string full = absl::AsciiStrToUpper(name);
  if (!absl::StartsWith(full, "JOB_STATE_")) full = absl::StrCat("JOB_STATE_", full);
  JobState state;
  if (!JobState_Parse(full, &state) || state == JOB_STATE_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown job state '", name,
                     "' (one of QUEUED, RUNNING, FINISHING, SUCCEEDED, FAILED, STOPPED)"));
  }
  return state;
}

absl::StatusOr<uint64_t> UnsignedParameter(const HttpRequest& request, const std::string& name) {
  auto found = request.query.find(name);
  if (found == request.query.end() || found->second.empty()) return 0;
  uint64_t value = 0;
  if (!absl::SimpleAtoi(found->second, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "query parameter ", name, " must be a whole number >= 0, got '", found->second, "'"));
  }
  return value;
}

}  // namespace

ConsoleApi::ConsoleApi(coordinator::Coordinator& coordinator, const TokenAuthenticator& tokens,
                       ConsoleApiOptions options)
    : coordinator_(coordinator), tokens_(tokens), options_(std::move(options)) {}

HttpResponse ConsoleApi::Answer(const HttpRequest& request) const {
  if (request.path == "/api/console") {
    if (request.method != "GET") return Error(405, "/api/console answers GET");
    return ConsoleInfo();
  }
  const bool stop = request.method == "POST" && absl::EndsWith(request.path, "/stop");
  std::optional<absl::string_view> authorization = request.Header("authorization");
  // No WWW-Authenticate challenge with a refusal: the page asks for the
  // token itself, and a browser's own login dialog would get in its way.
  if (absl::Status allowed = tokens_.Authorize(
          stop ? TokenScope::kClientAdmin : TokenScope::kClientRead, authorization);
      !allowed.ok()) {
    return ErrorOf(allowed);
  }
  return Route(request);
}

HttpResponse ConsoleApi::Route(const HttpRequest& request) const {
  const std::vector<std::string> parts =
      absl::StrSplit(absl::string_view(request.path).substr(kApi.size()), '/');
  const bool get = request.method == "GET";
  if (parts.size() == 1 && parts[0] == "jobs") {
    return get ? ListJobs(request) : Error(405, "/api/jobs answers GET");
  }
  if (parts.size() == 2 && parts[0] == "jobs" && !parts[1].empty()) {
    return get ? JsonOr(coordinator_.GetJob(parts[1])) : Error(405, "/api/jobs/<job> answers GET");
  }
  if (parts.size() == 3 && parts[0] == "jobs" && parts[2] == "events") {
    return get ? JobEvents(parts[1], request) : Error(405, "/api/jobs/<job>/events answers GET");
  }
  if (parts.size() == 3 && parts[0] == "jobs" && parts[2] == "stop") {
    return request.method == "POST" ? StopJob(parts[1], request)
                                    : Error(405, "/api/jobs/<job>/stop answers POST");
  }
  if (parts.size() == 1 && parts[0] == "cluster") {
    return get ? Json(coordinator_.GetCluster()) : Error(405, "/api/cluster answers GET");
  }
  if (parts.size() == 4 && parts[0] == "members" && parts[3] == "metrics") {
    return get ? MemberMetrics(parts[1], parts[2])
               : Error(405, "/api/members/<role>/<index>/metrics answers GET");
  }
  return Error(404, absl::StrCat("no endpoint ", request.path,
                                 " (see docs/console.md for the console's endpoints)"));
}

HttpResponse ConsoleApi::ConsoleInfo() const {
  google::protobuf::Struct info;
  auto& fields = *info.mutable_fields();
  fields["auth_required"].set_bool_value(
      !tokens_.Authorize(TokenScope::kClientRead, std::nullopt).ok());
  fields["stop_enabled"].set_bool_value(options_.allow_stop);
  fields["coordinator"].set_string_value(options_.coordinator_address);
  return Json(info);
}

HttpResponse ConsoleApi::ListJobs(const HttpRequest& request) const {
  ListJobsRequest list;
  if (auto states = request.query.find("state"); states != request.query.end()) {
    for (absl::string_view name : absl::StrSplit(states->second, ',', absl::SkipEmpty())) {
      absl::StatusOr<JobState> state = JobStateFromName(name);
      if (!state.ok()) return ErrorOf(state.status());
      list.add_states(*state);
    }
  }
  absl::StatusOr<uint64_t> limit = UnsignedParameter(request, "limit");
  if (!limit.ok()) return ErrorOf(limit.status());
  if (*limit > 10000) return Error(400, "query parameter limit must be at most 10000");
  list.set_limit(static_cast<int32_t>(*limit));
  return JsonOr(coordinator_.ListJobs(list));
}

HttpResponse ConsoleApi::JobEvents(const std::string& job_id, const HttpRequest& request) const {
  absl::StatusOr<uint64_t> after = UnsignedParameter(request, "after");
  if (!after.ok()) return ErrorOf(after.status());
  absl::StatusOr<coordinator::JobHistory::Read> read = coordinator_.JobEvents(job_id, *after);
  if (!read.ok()) return ErrorOf(read.status());
  std::vector<std::string> events;
  events.reserve(read->events.size());
  for (const JobEvent& event : read->events) events.push_back(ToJson(event));
  // The sequence number is a string like every int64 of the messages.
  HttpResponse response =
      HttpResponse::Json(200, absl::StrCat("{\"next\":\"", read->next, "\",\"events\":[",
                                           absl::StrJoin(events, ","), "]}"));
  response.headers.push_back({"Cache-Control", "no-store"});
  return response;
}

HttpResponse ConsoleApi::StopJob(const std::string& job_id, const HttpRequest& request) const {
  if (!options_.allow_stop) {
    return Error(403,
                 "this console may not stop jobs (start the coordinator with --console_stop); "
                 "`pstrain stop` can");
  }
  if (request.Header("x-pstrain-console") != "stop") {
    return Error(403, "a stop must come from the console page (header X-Pstrain-Console: stop)");
  }
  StopJobRequest stop;
  stop.set_job_id(job_id);
  stop.set_immediately(request.query.count("immediately") > 0 &&
                       request.query.at("immediately") == "true");
  return JsonOr(coordinator_.StopJob(stop));
}

HttpResponse ConsoleApi::MemberMetrics(const std::string& role, const std::string& index) const {
  absl::StatusOr<TaskType> type = TaskTypeFromName(role);
  int task_index = 0;
  if (!type.ok() || !absl::SimpleAtoi(index, &task_index)) {
    return Error(400, absl::StrCat("no member ", role, "/", index,
                                   ": a role (ps, worker, evaluator) and an index"));
  }
  const ClusterStatus cluster = coordinator_.GetCluster();
  for (const Member& member : cluster.members()) {
    if (member.task().type() != *type || member.task().index() != task_index) continue;
    if (member.metrics_address().empty()) {
      return Error(404, absl::StrCat(role, "/", index, " reported no metrics address"));
    }
    absl::StatusOr<std::string> page =
        HttpGet(member.metrics_address(), "/metrics", options_.member_metrics_timeout);
    if (!page.ok()) {
      return Error(502, absl::StrCat("cannot read ", role, "/", index, "'s metrics at ",
                                     member.metrics_address(), ": ", page.status().message()));
    }
    HttpResponse response = HttpResponse::Text(200, *std::move(page));
    response.headers.push_back({"Cache-Control", "no-store"});
    return response;
  }
  return Error(404, absl::StrCat("no member ", role, "/", index, " in the cluster"));
}

}  // namespace console
}  // namespace pstrain
