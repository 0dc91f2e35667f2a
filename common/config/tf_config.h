#ifndef PSTRAIN_COMMON_CONFIG_TF_CONFIG_H_
#define PSTRAIN_COMMON_CONFIG_TF_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_field.h"
#include "protos/cluster.pb.h"

namespace pstrain {

// TF_CONFIG after parsing and checking: the cluster and this process's task.
struct ParsedTfConfig {
  // "master" lists are moved to `chief`.
  ClusterSpec cluster;
  // type is never TASK_TYPE_UNSPECIFIED; index is within the list of its
  // role, or 0 for an evaluator that the cluster does not list.
  TaskId task;
};

// Parses the TF_CONFIG environment variable exactly as TensorFlow and
// Kubeflow's TFJob operator write it:
//
//   {"cluster": {"chief": ["host:port"], "ps": [...], "worker": [...],
//                "evaluator": [...]},
//    "task": {"type": "worker", "index": 0}, "environment": "cloud"}
//
// Other keys ("environment", "rpc_layer", unknown roles) are ignored. TFJob's
// older "master" role is accepted as another name for "chief", both as a
// cluster key and as task.type. An evaluator need not be listed in the
// cluster (TFJob leaves it out); it then must have index 0.
//
// Returns InvalidArgument, with a message that starts with "TF_CONFIG", when:
//   the text is not a JSON object ("TF_CONFIG is not valid JSON: ...");
//   a value has the wrong JSON type ("TF_CONFIG: (task.index): ...");
//   an address is not host:port ("TF_CONFIG: cluster.ps[1]: 'x' is not ...");
//   the cluster lists more than one chief, or both chief and master;
//   task, task.type or a known task.type is missing;
//   task.index is negative or outside its role's list ("TF_CONFIG:
//     task.index 3 is out of range: cluster.worker has 2 entries").
absl::StatusOr<ParsedTfConfig> ParseTfConfig(absl::string_view json);

// The TF_CONFIG that ParseTfConfig reads back as `cluster` and `task`, as
// Kubeflow's TFJob operator writes it: {"cluster": {"chief": [...], ...},
// "task": {"type": "ps", "index": 1}}. For launchers that place tasks on
// hosts of their own (client/local_cluster.h).
std::string FormatTfConfig(const ClusterSpec& cluster, const TaskId& task);

// Maps a TF_CONFIG role name to its TaskType: "chief" and "master" to
// TASK_TYPE_CHIEF, "ps", "worker", "evaluator". Names are lower case, as
// TensorFlow writes them. Returns InvalidArgument listing the known names.
absl::StatusOr<TaskType> TaskTypeFromName(absl::string_view name);

// The TF_CONFIG name of `type` ("chief", "ps", ...), "unspecified" for
// TASK_TYPE_UNSPECIFIED and unknown values.
absl::string_view TaskTypeName(TaskType type);

// The addresses `cluster` lists for `type`; empty for TASK_TYPE_UNSPECIFIED.
const google::protobuf::RepeatedPtrField<std::string>& TaskAddresses(const ClusterSpec& cluster,
                                                                     TaskType type);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CONFIG_TF_CONFIG_H_
