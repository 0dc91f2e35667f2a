#ifndef PSTRAIN_COMMON_CONFIG_CLUSTER_CONFIG_H_
#define PSTRAIN_COMMON_CONFIG_CLUSTER_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "protos/cluster.pb.h"

namespace pstrain {

// The cluster flags of a pstrain binary, as given on its command line. An
// empty string or std::nullopt means "not given": pass a flag's value only
// when the user set it (gflags::GetCommandLineFlagInfoOrDie(name).is_default
// tells), since a default would always override TF_CONFIG.
struct ClusterFlags {
  // --coordinator_address: host:port of the coordinator (the chief).
  std::string coordinator_address;
  // --ps_addresses: comma-separated host:port of every parameter server, in
  // shard order.
  std::string ps_addresses;
  // --task_index: this process's index within its role.
  std::optional<int> task_index;
  // --listen: host:port this process's server binds; port 0 picks a
  // free port.
  std::string listen_address;
};

// Where this process sits in the cluster, after TF_CONFIG and flags.
struct ClusterConfig {
  // Every role's addresses, with flags applied: --coordinator_address
  // replaces the chief list, --ps_addresses the ps list.
  ClusterSpec spec;
  // This process; type is the binary's role.
  TaskId task;
  // host:port of the coordinator. Empty only for the coordinator itself when
  // neither TF_CONFIG nor a flag lists it.
  std::string coordinator_address;
  // spec.ps in shard order; may be empty (parameter servers then register
  // with the coordinator).
  std::vector<std::string> ps_addresses;
  // This task's entry in `spec`, the address peers use for it. Empty when the
  // spec does not list it (an unlisted evaluator; a worker started by flags).
  std::string own_address;
  // What this process's server binds. --listen if given; else
  // "0.0.0.0:<port of own_address>", as TensorFlow binds a listed task on
  // every interface (a pod's DNS name may resolve to a Service IP it cannot
  // bind); else "127.0.0.1:0", a free port on loopback only, because a
  // process that no cluster spec describes is part of a local cluster.
  std::string listen_address;
};

// Resolves this process's cluster configuration from its flags and the
// TF_CONFIG environment variable (`tf_config_json`; std::nullopt or blank
// when unset). Flags win over TF_CONFIG, field by field. Pure: reads no
// environment and no global flags, so every binary and test calls it the
// same way.
//
// `expected_type` is the binary's role; TF_CONFIG's task.type must match it.
// Without TF_CONFIG the task is {expected_type, --task_index or 0}.
//
// Returns InvalidArgument naming the flag or TF_CONFIG field at fault:
//   any error of ParseTfConfig ("TF_CONFIG: task.index 3 is out of range:
//     cluster.worker has 2 entries");
//   "TF_CONFIG: task.type is \"worker\" but this process is a ps";
//   "--ps_addresses: 'localhost' is not host:port" (and likewise for
//     --coordinator_address and --listen), or an empty entry;
//   "--task_index must be >= 0, got -1";
//   "--task_index 4 is out of range: cluster.ps (from --ps_addresses) has 2
//     entries": the index must fall within its role's list when there is
//     one (workers and parameter servers started by flags alone are not
//     listed: they register with the coordinator); the chief's index is 0;
//   a task other than the chief with no coordinator address anywhere.
absl::StatusOr<ClusterConfig> ResolveClusterConfig(const ClusterFlags& flags,
                                                   const std::optional<std::string>& tf_config_json,
                                                   TaskType expected_type);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_CLUSTER_CONFIG_H_
