#include "common/config/cluster_config.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/config/internal/peer_address.h"
#include "common/config/tf_config.h"
#include "common/net/host_port.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

// Every interface, as TensorFlow's gRPC server binds a listed task.
constexpr char kAnyInterface[] = "0.0.0.0";
// A process that no cluster spec describes belongs to a local cluster; it
// should not be reachable from other machines by default.
constexpr char kLocalListenAddress[] = "127.0.0.1:0";

absl::Status FlagError(absl::string_view flag, const absl::Status& status) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", status.message()));
}

absl::StatusOr<std::vector<std::string>> ParsePsAddressesFlag(absl::string_view flag) {
  std::vector<std::string> addresses;
  int position = 0;
  for (absl::string_view entry : absl::StrSplit(flag, ',')) {
    ++position;
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--ps_addresses: entry ", position, " of '", flag, "' is empty"));
    }
    absl::StatusOr<HostPort> parsed = config_internal::ParsePeerAddress(entry);
    if (!parsed.ok()) return FlagError("--ps_addresses", parsed.status());
    addresses.emplace_back(entry);
  }
  return addresses;
}

// Where the task index and each address list came from, for messages.
struct ConfigSources {
  std::string index = "--task_index";
  std::string chief = "TF_CONFIG";
  std::string ps = "TF_CONFIG";
};

// Takes the cluster and the task from TF_CONFIG, when it is set.
absl::Status ApplyTfConfig(const std::optional<std::string>& tf_config_json, TaskType expected_type,
                           ClusterConfig* config, ConfigSources* sources) {
  if (!tf_config_json.has_value() || absl::StripAsciiWhitespace(*tf_config_json).empty()) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(ParsedTfConfig parsed, ParseTfConfig(*tf_config_json));
  if (parsed.task.type() != expected_type) {
    return absl::InvalidArgumentError(
        absl::StrCat("TF_CONFIG: task.type is \"", TaskTypeName(parsed.task.type()),
                     "\" but this process is a ", TaskTypeName(expected_type)));
  }
  config->spec = std::move(parsed.cluster);
  config->task = std::move(parsed.task);
  sources->index = "TF_CONFIG: task.index";
  return absl::OkStatus();
}

// Lets the flags given override TF_CONFIG's coordinator, shards and index.
absl::Status ApplyFlags(const ClusterFlags& flags, ClusterConfig* config, ConfigSources* sources) {
  if (!flags.coordinator_address.empty()) {
    absl::StatusOr<HostPort> parsed = config_internal::ParsePeerAddress(flags.coordinator_address);
    if (!parsed.ok()) return FlagError("--coordinator_address", parsed.status());
    config->spec.clear_chief();
    config->spec.add_chief(flags.coordinator_address);
    sources->chief = "--coordinator_address";
  }
  if (!flags.ps_addresses.empty()) {
    ASSIGN_OR_RETURN(std::vector<std::string> ps, ParsePsAddressesFlag(flags.ps_addresses));
    config->spec.clear_ps();
    for (std::string& address : ps) config->spec.add_ps(std::move(address));
    sources->ps = "--ps_addresses";
  }
  if (flags.task_index.has_value()) {
    if (*flags.task_index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--task_index must be >= 0, got ", *flags.task_index));
    }
    config->task.set_index(*flags.task_index);
    sources->index = "--task_index";
  }
  return absl::OkStatus();
}

// Checks the task's index against its role's list and takes its own
// address from it.
absl::Status PlaceTask(TaskType expected_type, const ConfigSources& sources,
                       ClusterConfig* config) {
  // One coordinator per cluster: TensorFlow's chief is always index 0.
  if (expected_type == TASK_TYPE_CHIEF && config->task.index() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(sources.index, " must be 0 for the chief, got ", config->task.index()));
  }
  const auto& own_list = TaskAddresses(config->spec, expected_type);
  if (!own_list.empty() && config->task.index() >= own_list.size()) {
    absl::string_view list_source = "TF_CONFIG";
    if (expected_type == TASK_TYPE_CHIEF) list_source = sources.chief;
    if (expected_type == TASK_TYPE_PS) list_source = sources.ps;
    return absl::InvalidArgumentError(
        absl::StrCat(sources.index, " ", config->task.index(), " is out of range: cluster.",
                     TaskTypeName(expected_type), " (from ", list_source, ") has ", own_list.size(),
                     own_list.size() == 1 ? " entry" : " entries"));
  }
  if (config->task.index() < own_list.size()) {
    config->own_address = own_list[config->task.index()];
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClusterConfig> ResolveClusterConfig(const ClusterFlags& flags,
                                                   const std::optional<std::string>& tf_config_json,
                                                   TaskType expected_type) {
  if (expected_type == TASK_TYPE_UNSPECIFIED || !TaskType_IsValid(expected_type)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected_type must be a role, got ", static_cast<int>(expected_type)));
  }
  ClusterConfig config;
  config.task.set_type(expected_type);
  ConfigSources sources;
  RETURN_IF_ERROR(ApplyTfConfig(tf_config_json, expected_type, &config, &sources));
  RETURN_IF_ERROR(ApplyFlags(flags, &config, &sources));
  RETURN_IF_ERROR(PlaceTask(expected_type, sources, &config));

  if (!config.spec.chief().empty()) {
    config.coordinator_address = config.spec.chief(0);
  } else if (expected_type != TASK_TYPE_CHIEF) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no coordinator address for this ", TaskTypeName(expected_type),
        ": give --coordinator_address, or list the chief in TF_CONFIG's cluster.chief"));
  }
  config.ps_addresses.assign(config.spec.ps().begin(), config.spec.ps().end());

  if (!flags.listen_address.empty()) {
    absl::StatusOr<HostPort> parsed = ParseHostPort(flags.listen_address);
    if (!parsed.ok()) return FlagError("--listen", parsed.status());
    config.listen_address = flags.listen_address;
  } else if (!config.own_address.empty()) {
    ASSIGN_OR_RETURN(HostPort own, config_internal::ParsePeerAddress(config.own_address));
    config.listen_address = absl::StrCat(kAnyInterface, ":", own.port);
  } else {
    config.listen_address = kLocalListenAddress;
  }
  return config;
}

}  // namespace pstrain
