#include "common/config/tf_config.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/config/internal/json_error.h"
#include "common/config/internal/peer_address.h"
#include "common/status/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace pstrain {
namespace {

namespace pb = ::google::protobuf;

constexpr TaskType kAllTaskTypes[] = {TASK_TYPE_CHIEF, TASK_TYPE_PS, TASK_TYPE_WORKER,
                                      TASK_TYPE_EVALUATOR};

// Parses into a generic JSON tree first, so that syntax errors are told apart
// from values of the wrong type, and so that TFJob's "master" key (which
// ClusterSpec has no field for) can be renamed before the typed parse.
absl::StatusOr<pb::Struct> ParseJsonObject(absl::string_view json) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(json);
  if (trimmed.empty() || trimmed.front() != '{') {
    return absl::InvalidArgumentError(
        absl::StrCat("TF_CONFIG is not valid JSON: it must be an object {...}, got '",
                     trimmed.substr(0, 40), trimmed.size() > 40 ? "...'" : "'"));
  }
  pb::Struct root;
  pb::util::Status parsed =
      pb::util::JsonStringToMessage(pb::StringPiece(trimmed.data(), trimmed.size()), &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("TF_CONFIG is not valid JSON: ", config_internal::JsonErrorMessage(parsed)));
  }
  return root;
}

// Renames cluster.master to cluster.chief in place.
absl::Status RenameMaster(pb::Struct* root) {
  auto cluster_it = root->mutable_fields()->find("cluster");
  if (cluster_it == root->mutable_fields()->end() || !cluster_it->second.has_struct_value()) {
    return absl::OkStatus();  // absent, or a wrong type the typed parse reports
  }
  auto* cluster = cluster_it->second.mutable_struct_value()->mutable_fields();
  auto master_it = cluster->find("master");
  if (master_it == cluster->end()) return absl::OkStatus();
  if (cluster->count("chief") > 0) {
    return absl::InvalidArgumentError(
        "TF_CONFIG: cluster has both chief and master; master is TFJob's older name for "
        "chief, give only one");
  }
  pb::Value master = std::move(master_it->second);
  cluster->erase(master_it);
  (*cluster)["chief"] = std::move(master);
  return absl::OkStatus();
}

absl::Status CheckAddresses(const ClusterSpec& cluster) {
  for (TaskType type : kAllTaskTypes) {
    const auto& addresses = TaskAddresses(cluster, type);
    for (int i = 0; i < addresses.size(); ++i) {
      absl::StatusOr<HostPort> parsed = config_internal::ParsePeerAddress(addresses[i]);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("TF_CONFIG: cluster.", TaskTypeName(type),
                                                       "[", i, "]: ", parsed.status().message()));
      }
    }
  }
  // TensorFlow allows at most one chief; a second coordinator has no meaning.
  if (cluster.chief_size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("TF_CONFIG: cluster.chief has ",
                                                   cluster.chief_size(),
                                                   " entries; a cluster has at most one chief"));
  }
  return absl::OkStatus();
}

absl::Status CheckTaskIndex(const ClusterSpec& cluster, const TaskId& task) {
  if (task.index() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TF_CONFIG: task.index must be >= 0, got ", task.index()));
  }
  const int listed = TaskAddresses(cluster, task.type()).size();
  if (task.index() < listed) return absl::OkStatus();
  // TFJob leaves the evaluator out of the cluster: it serves nothing.
  if (listed == 0 && task.type() == TASK_TYPE_EVALUATOR) {
    if (task.index() == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "TF_CONFIG: task.index ", task.index(),
        " is out of range: cluster.evaluator has 0 entries, and an unlisted evaluator must have "
        "index 0"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "TF_CONFIG: task.index ", task.index(), " is out of range: cluster.",
      TaskTypeName(task.type()), " has ", listed, listed == 1 ? " entry" : " entries"));
}

}  // namespace

absl::StatusOr<TaskType> TaskTypeFromName(absl::string_view name) {
  if (name == "chief" || name == "master") return TASK_TYPE_CHIEF;
  if (name == "ps") return TASK_TYPE_PS;
  if (name == "worker") return TASK_TYPE_WORKER;
  if (name == "evaluator") return TASK_TYPE_EVALUATOR;
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", name, "\" is not a task type: want chief, master, ps, worker or evaluator"));
}

absl::string_view TaskTypeName(TaskType type) {
  switch (type) {
    case TASK_TYPE_CHIEF:
      return "chief";
    case TASK_TYPE_PS:
      return "ps";
    case TASK_TYPE_WORKER:
      return "worker";
    case TASK_TYPE_EVALUATOR:
      return "evaluator";
    default:
      return "unspecified";
  }
}

const pb::RepeatedPtrField<std::string>& TaskAddresses(const ClusterSpec& cluster, TaskType type) {
  switch (type) {
    case TASK_TYPE_CHIEF:
      return cluster.chief();
    case TASK_TYPE_PS:
      return cluster.ps();
    case TASK_TYPE_WORKER:
      return cluster.worker();
    case TASK_TYPE_EVALUATOR:
      return cluster.evaluator();
    default:
      return ClusterSpec::default_instance().chief();  // always empty
  }
}

absl::StatusOr<ParsedTfConfig> ParseTfConfig(absl::string_view json) {
  ASSIGN_OR_RETURN(pb::Struct root, ParseJsonObject(json));
  RETURN_IF_ERROR(RenameMaster(&root));

  std::string normalized;
  pb::util::Status printed = pb::util::MessageToJsonString(root, &normalized);
  if (!printed.ok()) {
    return absl::InternalError(
        absl::StrCat("TF_CONFIG: re-encoding failed: ", std::string(printed.message())));
  }
  TfConfig config;
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // "environment", "rpc_layer", ...
  pb::util::Status parsed = pb::util::JsonStringToMessage(normalized, &config, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("TF_CONFIG: ", config_internal::JsonErrorMessage(parsed)));
  }

  ParsedTfConfig result;
  result.cluster = config.cluster();
  RETURN_IF_ERROR(CheckAddresses(result.cluster));

  if (!config.has_task()) {
    return absl::InvalidArgumentError(
        "TF_CONFIG: task is missing; it must say which task this process is, as in "
        "\"task\": {\"type\": \"worker\", \"index\": 0}");
  }
  if (config.task().type().empty()) {
    return absl::InvalidArgumentError("TF_CONFIG: task.type is missing");
  }
  absl::StatusOr<TaskType> type = TaskTypeFromName(config.task().type());
  if (!type.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("TF_CONFIG: task.type ", type.status().message()));
  }
  result.task.set_type(*type);
  result.task.set_index(config.task().index());
  RETURN_IF_ERROR(CheckTaskIndex(result.cluster, result.task));
  return result;
}

std::string FormatTfConfig(const ClusterSpec& cluster, const TaskId& task) {
  std::string cluster_json;
  pb::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  // A ClusterSpec of repeated strings always prints.
  static_cast<void>(pb::util::MessageToJsonString(cluster, &cluster_json, options));
  return absl::StrCat("{\"cluster\": ", cluster_json, ", \"task\": {\"type\": \"",
                      TaskTypeName(task.type()), "\", \"index\": ", task.index(), "}}");
}

}  // namespace pstrain
