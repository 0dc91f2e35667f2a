#ifndef PSTRAIN_TESTS_K8S_CONTAINER_H_
#define PSTRAIN_TESTS_K8S_CONTAINER_H_

// A container of a rendered pod as the kubelet would start it: which of the
// image's binaries it runs, with which flags once $(VAR) references are
// expanded, and which of its pod's ports it declares and listens on.

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/k8s_manifest.h"

namespace pstrain {
namespace k8s_testing {

// Where the image puts the binaries (deploy/docker/Dockerfile), and which.
inline constexpr char kBinDir[] = "/usr/local/bin/";
inline constexpr const char* kBinaries[] = {"pstrain", "pstrain-coordinator", "pstrain-ps",
                                            "pstrain-worker", "pstrain-evaluator"};

// The flags a daemon serves on, each a host:port.
inline constexpr const char* kListenFlags[] = {"listen", "health_listen", "metrics_listen"};

// "--name=value" -> {name, value}; anything else -> {"", arg}.
std::pair<std::string, std::string> SplitFlag(const std::string& arg);

// The value of --`name` in `args`, "" when not given.
std::string FlagValue(const std::vector<std::string>& args, absl::string_view name);

// The argument --`name`=... of a container as written, before the kubelet
// expands it ("$(POD_INDEX)"); "" when not given.
std::string WrittenFlag(const Value& container, absl::string_view name);

// The entry of the container's env named `name`, nullptr if none.
const Value* EnvEntry(const Value& container, absl::string_view name);

// A container with its arguments expanded as the kubelet expands them.
// Borrows the pod and the container from what it was resolved from.
struct ResolvedContainer {
  const Pod* pod = nullptr;
  const Value* container = nullptr;
  std::string binary;  // basename of the command
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  // The port of each of kListenFlags given, by flag name ("listen" -> 7070).
  std::map<std::string, int> listen_ports;

  // "pstrain-ps-0/worker (StatefulSet/pstrain-ps)": a pod may have several.
  std::string where() const;
  // The port --`flag` (one of kListenFlags) listens on; 0 when not given.
  int ListenedPort(absl::string_view flag) const;
};

// Every container of `pods`, whose workloads are among `objects`; each
// borrows its pod from `pods`. InvalidArgument lists every container the
// kubelet could not start as written: an environment variable it cannot
// resolve, a command other than one binary in kBinDir, an argument naming an
// undefined variable, or a listen flag that is no host:port on 0.0.0.0 (the
// kubelet's probes and the pod's peers come from outside the pod).
absl::StatusOr<std::vector<ResolvedContainer>> ResolveContainers(const std::vector<Pod>& pods,
                                                                 const std::vector<Value>& objects);

// The flag names `binary --helpfull` lists ("  -listen (host:port ...").
// NotFound when the binary is not in the runfiles; Internal when it does not
// run or lists no --listen (so its help was not read right).
absl::StatusOr<std::set<std::string>> AcceptedFlags(const std::string& binary);

// The containerPort a probe or Service names (by name or number); 0 if none.
int ContainerPort(const Value& container, const Value& port_ref);
// ContainerPort by port name ("tfjob-port").
int NamedContainerPort(const Value& container, const std::string& name);

// How a Service's targetPort, a network policy's port or a monitor's port
// reads in a message: "metrics" or "9090".
std::string PortRefText(const Value& port_ref);

// The container of a pod that declares the port a Service, network policy
// or monitor names, and the port's number; a null container when none does.
struct PodPort {
  const ResolvedContainer* container = nullptr;
  int port = 0;
};

// The port `port_ref` names (by name or number) in `pod`, looked up across
// all the pod's containers as Kubernetes does: the colocated overlay runs a
// shard and a worker in one pod.
PodPort FindPodPort(const std::vector<ResolvedContainer>& containers, const Pod& pod,
                    const Value& port_ref);

// The Secret key behind the file `path` of container `c`: `path` must lie in
// a read-only mount of a Secret volume that lists the key among its items
// (so the file is there whatever else the Secret holds). NotFound when no
// mount holds `path` or the Secret lists no item for it; FailedPrecondition
// when the mount is writable or not of a Secret.
absl::StatusOr<std::string> SecretKeyOfFile(const ResolvedContainer& c, const std::string& path);

}  // namespace k8s_testing
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_K8S_CONTAINER_H_
