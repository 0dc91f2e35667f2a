#ifndef PSTRAIN_TESTS_K8S_MANIFEST_H_
#define PSTRAIN_TESTS_K8S_MANIFEST_H_

// The Kubernetes manifests of deploy/k8s as tests see them: rendered with
// `kubectl kustomize` (kubectl from PATH; no cluster needed), converted to
// JSON by kubectl itself, and expanded into the pods a cluster would run,
// with each container's environment resolved as the kubelet resolves it.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

namespace pstrain {
namespace k8s_testing {

using google::protobuf::Value;

// Runs `command` with /bin/sh to its end (at most two minutes) and returns
// its stdout. Internal, with the command's stderr, when it exits non-zero.
absl::StatusOr<std::string> RunShell(const std::string& command);

// The path of `relative` (e.g. "deploy/k8s") in the test's runfiles.
std::string RunfilesPath(const std::string& relative);
// The contents of `relative` in the test's runfiles ("deploy/README.md"),
// "" when it cannot be read.
std::string ReadRunfile(const std::string& relative);

// What RenderManifests renders for kGeneratedTfJob: the TFJob and
// ConfigMap that `pstrain k8s` writes for the example click-log job (2
// parameter servers, 2 workers, max_steps raised to kGeneratedTfJobSteps so
// that the pods outlive their readiness checks), with deploy/k8s/shared, in
// namespace pstrain-tfjob.
inline constexpr char kGeneratedTfJob[] = "pstrain k8s";
inline constexpr int kGeneratedTfJobSteps = 1500;

// Renders the kustomization in deploy/k8s/`name` ("overlays/dev", "tfjob"),
// or kGeneratedTfJob, and returns every object, rendered once per process.
// The tree is copied first (symbolic links followed) so kustomize's rule
// that files lie under the kustomization root holds in the runfiles tree.
absl::StatusOr<std::vector<Value>> RenderManifests(const std::string& name);

// RenderManifests of `name` under one more kustomization that sets the
// replicas of `workload` ("pstrain-worker") to `count`, as a user's edit of
// an overlay's `replicas:` would. Rendered afresh on every call.
absl::StatusOr<std::vector<Value>> RenderManifestsWithReplicas(const std::string& name,
                                                               const std::string& workload,
                                                               int count);

// The value at a dotted path ("spec.template.spec"), nullptr when a part is
// missing or not an object.
const Value* Find(const Value& root, absl::string_view path);
// The string / number / bool at `path`; "" / -1 / false when absent or of
// another type.
std::string StringAt(const Value& root, absl::string_view path);
double NumberAt(const Value& root, absl::string_view path);
bool BoolAt(const Value& root, absl::string_view path);
// The list at `path`, empty when absent.
std::vector<const Value*> ListAt(const Value& root, absl::string_view path);
// The string entries of the object `value` points to (labels, a selector's
// matchLabels), empty when it is null or not an object. Its keys may hold
// dots ("app.kubernetes.io/part-of"), which a dotted path cannot name.
std::map<std::string, std::string> StringMap(const Value* value);

// A Kubernetes quantity as the manifests write them ("250m", "1", "2Gi",
// "512Mi") in base units. InvalidArgument when `text` is none.
absl::StatusOr<double> Quantity(absl::string_view text);

// Objects of `kind`, and the one of `kind` named `name` (nullptr if none).
std::vector<const Value*> ObjectsOfKind(const std::vector<Value>& objects, absl::string_view kind);
const Value* FindObject(const std::vector<Value>& objects, absl::string_view kind,
                        absl::string_view name);

// One pod a workload would create.
struct Pod {
  std::string name;            // pstrain-ps-1, pstrain-coordinator-0, pstrain-worker-0
  std::string workload;        // "StatefulSet/pstrain-ps", "TFJob/pstrain:PS"
  std::string namespace_name;  // metadata.namespace of the workload
  int index = 0;               // StatefulSet ordinal, TFJob replica index
  std::string replica_type;    // TFJob only: "chief", "ps", "worker", "evaluator"
  // For StatefulSets: the governing Service, which gives the pod the DNS
  // name <name>.<subdomain>.
  std::string subdomain;
  // The template's labels plus what the controller adds
  // (apps.kubernetes.io/pod-index for StatefulSets).
  std::map<std::string, std::string> labels;
  const Value* spec = nullptr;  // the pod template's spec (borrowed)
};

// Every pod of every Deployment, StatefulSet and TFJob in `objects`.
std::vector<Pod> ExpandPods(const std::vector<Value>& objects);

// A container's environment as the kubelet sets it: value, and valueFrom
// configMapKeyRef (from `objects`) and fieldRef (metadata.name,
// metadata.namespace, metadata.labels['...']). NotFound names what is
// missing.
absl::StatusOr<std::map<std::string, std::string>> ContainerEnv(
    const Value& container, const Pod& pod, const std::vector<Value>& objects);

// `text` with every $(NAME) replaced by env's NAME, as Kubernetes expands
// command and args; a reference to an unknown name stays as written.
std::string ExpandEnvReferences(const std::string& text,
                                const std::map<std::string, std::string>& env);

// Whether the selector's matchLabels and matchExpressions (In, NotIn,
// Exists, DoesNotExist) match `labels`; a selector given as a plain map (a
// Service's) is taken as matchLabels.
bool SelectorMatches(const Value& selector, const std::map<std::string, std::string>& labels);

}  // namespace k8s_testing
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_K8S_MANIFEST_H_
