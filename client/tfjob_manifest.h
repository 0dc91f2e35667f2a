#ifndef PSTRAIN_CLIENT_TFJOB_MANIFEST_H_
#define PSTRAIN_CLIENT_TFJOB_MANIFEST_H_

#include <string>

#include "absl/status/statusor.h"

namespace pstrain {

// What `pstrain k8s` puts into the manifest of one training run.
struct TfJobManifestOptions {
  // The TFJob's name, also the prefix of its pods ("<name>-worker-0") and
  // of the ConfigMap holding the spec ("<name>-job"): a DNS label of at
  // most kMaxTfJobNameLength characters.
  std::string name;
  // Written into every object when not empty; otherwise kubectl's current
  // namespace applies.
  std::string namespace_name;
  std::string image = "pstrain:latest";
  int num_ps = 1;
  int num_workers = 1;
  // An evaluator replica (jobs that evaluate or export need one).
  bool evaluator = true;
  // The PersistentVolumeClaim mounted at /var/lib/pstrain in every pod
  // (the checkpoint root: model_dir, data).
  std::string volume_claim = "pstrain-model-dir";
  // Secrets as the prod overlay mounts them (deploy/README.md, "TLS and
  // tokens"); empty: none, plaintext and open.
  std::string tls_secret;
  std::string tokens_secret;
  // runPolicy.ttlSecondsAfterFinished; 0: the TFJob stays until deleted.
  int ttl_secs = 0;
  // runPolicy.backoffLimit: pod restarts before the TFJob fails.
  int backoff_limit = 3;
  // The ConfigMap key the spec is stored under and the coordinator reads
  // (its extension says the format): "job.pbtxt" or "job.json".
  std::string spec_key = "job.pbtxt";
  // The spec as the user wrote it, comments and all.
  std::string spec_text;
  // The command that wrote the manifest, for its header comment.
  std::string command_line;
};

// 63 (a DNS label) less the longest suffix the operator adds to a pod's
// name ("-evaluator-0" and two more digits of index).
inline constexpr int kMaxTfJobNameLength = 49;

// OK when `name` is a DNS-1035 label: lowercase letters, digits and '-',
// starting with a letter, not ending with '-', at most `max_length` long.
// InvalidArgument names `what` and the rule broken.
absl::Status CheckDnsLabel(const std::string& name, const std::string& what, int max_length = 63);

// The TFJob's name for a job spec's name: lowercase, every run of other
// characters turned into '-', cut to kMaxTfJobNameLength; "pstrain-job"
// when nothing is left.
std::string TfJobNameFor(const std::string& job_name);

// A ConfigMap holding the job spec and a Kubeflow TFJob (kubeflow.org/v1)
// whose pods run it once: the chief runs `pstrain-coordinator --job` on the
// spec, and every pod exits with the job's outcome, so the TFJob turns
// Succeeded or Failed (restartPolicy ExitCode: a crash or a signal restarts
// a pod, which resumes the job; an outcome is final). YAML, for `kubectl
// apply -f`.
// InvalidArgument: a name, namespace, image, claim or Secret name kubectl
// would refuse, counts below 1, or a spec that a ConfigMap cannot hold
// (control characters).
absl::StatusOr<std::string> TfJobManifest(const TfJobManifestOptions& options);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_TFJOB_MANIFEST_H_
