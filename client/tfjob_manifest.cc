#include "client/tfjob_manifest.h"

#include <cctype>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace pstrain {
namespace {

// Where the pods keep what the manifest mounts.
constexpr char kCheckpointRoot[] = "/var/lib/pstrain";
constexpr char kSpecDir[] = "/etc/pstrain/job";
// The operator's port name and number for TF_CONFIG; the plaintext health
// port the kubelet probes (7071, as in deploy/k8s/base); metrics.
constexpr int kTfJobPort = 2222;
constexpr int kHealthPort = 7071;
constexpr int kMetricsPort = 9090;

struct Resources {
  const char* cpu_request;
  const char* memory_request;
  const char* cpu_limit;
  const char* memory_limit;
};

// One replica type of the TFJob.
struct Replica {
  const char* type;       // the TFJob's key: Chief, PS, Worker, Evaluator
  const char* component;  // app.kubernetes.io/component
  const char* comment;
  int count;
  const char* binary;
  std::vector<std::string> args;
  Resources resources;
  // Longer than the daemon's --shutdown_grace_secs.
  int grace_secs;
  bool writes_model_dir;
  bool mounts_spec;
};

// A DNS-1123 subdomain, as the names of claims and Secrets must be.
bool IsDnsSubdomain(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (label.empty() || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') return false;
    }
  }
  return true;
}

// YAML's double-quoted form of a value checked to hold no quote,
// backslash or control character.
std::string Quoted(const std::string& text) { return absl::StrCat("\"", text, "\""); }

bool IsPlainText(const std::string& text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

// The spec as a literal block under a key at indentation 2: every line
// indented by 4 and the indentation given (|2), so a first line that starts
// with spaces is kept as written.
absl::StatusOr<std::string> SpecBlock(const std::string& key, const std::string& text) {
  std::string block = absl::StrCat("  ", key, ": |2\n");
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    for (unsigned char c : line) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        return absl::InvalidArgumentError(
            absl::StrCat("the job spec has a control character (byte ", static_cast<int>(c),
                         ") on line ", line_number, ", which a ConfigMap cannot hold"));
      }
    }
    absl::StrAppend(&block, line.empty() ? "" : "    ", line, "\n");
  }
  return block;
}

std::string Labels(const std::string& indent, const std::string& job,
                   const std::string& component) {
  std::string labels =
      absl::StrCat(indent, "app.kubernetes.io/name: pstrain\n", indent,
                   "app.kubernetes.io/part-of: pstrain\n", indent, "pstrain.io/job: ", job, "\n");
  if (!component.empty()) {
    absl::StrAppend(&labels, indent, "app.kubernetes.io/component: ", component, "\n");
  }
  return labels;
}

std::string Metadata(const TfJobManifestOptions& options, const std::string& name) {
  return absl::StrCat("metadata:\n  name: ", name, "\n",
                      options.namespace_name.empty()
                          ? ""
                          : absl::StrCat("  namespace: ", options.namespace_name, "\n"),
                      "  labels:\n", Labels("    ", options.name, ""));
}

std::vector<std::string> SecurityArgs(const TfJobManifestOptions& options) {
  std::vector<std::string> args;
  if (!options.tls_secret.empty()) {
    args.insert(args.end(),
                {"--tls_cert=/etc/pstrain/tls/tls.crt", "--tls_key=/etc/pstrain/tls/tls.key",
                 "--tls_ca=/etc/pstrain/tls/ca.crt", "--tls_client_auth=require"});
  }
  if (!options.tokens_secret.empty()) {
    args.insert(args.end(), {"--client_token_file=/etc/pstrain/tokens/client-token",
                             "--cluster_token_file=/etc/pstrain/tokens/cluster-token"});
  }
  return args;
}

std::string SecretVolume(const std::string& name, const std::string& secret,
                         const std::vector<std::string>& keys) {
  std::string volume = absl::StrCat("            - name: ", name, "\n              secret:\n",
                                    "                secretName: ", secret, "\n",
                                    "                defaultMode: 0440\n                items:\n");
  for (const std::string& key : keys) {
    absl::StrAppend(&volume, "                  - key: ", key, "\n                    path: ", key,
                    "\n");
  }
  return volume;
}

// A pod's volumeMounts and volumes, each as YAML lines at the depth the
// pod template puts them.
struct PodVolumes {
  std::string mounts;
  std::string volumes;
};

PodVolumes VolumesOf(const TfJobManifestOptions& options, const Replica& replica) {
  PodVolumes pod;
  std::string& mounts = pod.mounts;
  mounts = absl::StrCat("                - name: model-dir\n",
                        "                  mountPath: ", kCheckpointRoot, "\n",
                        replica.writes_model_dir ? "" : "                  readOnly: true\n",
                        "                - name: tmp\n", "                  mountPath: /tmp\n");
  std::string& volumes = pod.volumes;
  volumes = absl::StrCat(
      "            - name: model-dir\n              persistentVolumeClaim:\n",
      "                claimName: ", options.volume_claim, "\n",
      "            - name: tmp\n              emptyDir:\n                sizeLimit: 64Mi\n");
  if (replica.mounts_spec) {
    absl::StrAppend(&mounts, "                - name: job\n                  mountPath: ", kSpecDir,
                    "\n                  readOnly: true\n");
    absl::StrAppend(&volumes, "            - name: job\n              configMap:\n",
                    "                name: ", options.name, "-job\n");
  }
  if (!options.tls_secret.empty()) {
    absl::StrAppend(&mounts,
                    "                - name: tls\n                  mountPath: /etc/pstrain/tls\n"
                    "                  readOnly: true\n");
    absl::StrAppend(&volumes,
                    SecretVolume("tls", options.tls_secret, {"tls.crt", "tls.key", "ca.crt"}));
  }
  if (!options.tokens_secret.empty()) {
    absl::StrAppend(&mounts,
                    "                - name: tokens\n                  mountPath: "
                    "/etc/pstrain/tokens\n                  readOnly: true\n");
    absl::StrAppend(
        &volumes, SecretVolume("tokens", options.tokens_secret, {"client-token", "cluster-token"}));
  }
  return pod;
}

std::string ReplicaText(const TfJobManifestOptions& options, const Replica& replica) {
  std::string args;
  std::vector<std::string> all_args = replica.args;
  for (const std::string& arg : SecurityArgs(options)) all_args.push_back(arg);
  for (const std::string& arg : all_args) absl::StrAppend(&args, "                - ", arg, "\n");
  const PodVolumes pod = VolumesOf(options, replica);
  const Resources& r = replica.resources;
  return absl::StrCat(
      "    # ", replica.comment, "\n",                                        //
      "    ", replica.type, ":\n",                                            //
      "      replicas: ", replica.count, "\n",                                //
      "      restartPolicy: ExitCode\n",                                      //
      "      template:\n",                                                    //
      "        metadata:\n",                                                  //
      "          labels:\n",                                                  //
      Labels("            ", options.name, replica.component),                //
      "        spec:\n",                                                      //
      "          serviceAccountName: pstrain\n",                              //
      "          automountServiceAccountToken: false\n",                      //
      "          terminationGracePeriodSeconds: ", replica.grace_secs, "\n",  //
      "          securityContext:\n",                                         //
      "            runAsNonRoot: true\n",                                     //
      "            runAsUser: 10001\n",                                       //
      "            runAsGroup: 10001\n",                                      //
      "            fsGroup: 10001\n",                                         //
      "            seccompProfile:\n",                                        //
      "              type: RuntimeDefault\n",                                 //
      "          containers:\n",                                              //
      "            # The operator finds the container and its port by these names.\n",
      "            - name: tensorflow\n",                                    //
      "              image: ", Quoted(options.image), "\n",                  //
      "              imagePullPolicy: IfNotPresent\n",                       //
      "              command: [\"/usr/local/bin/", replica.binary, "\"]\n",  //
      "              args:\n",                                               //
      args,                                                                  //
      "              ports:\n",                                              //
      "                - name: tfjob-port\n",                                //
      "                  containerPort: ", kTfJobPort, "\n",                 //
      "                - name: health\n",                                    //
      "                  containerPort: ", kHealthPort, "\n",                //
      "                - name: metrics\n",                                   //
      "                  containerPort: ", kMetricsPort, "\n",               //
      "              # Ready while the daemon is a member of the cluster (the\n",
      "              # coordinator: while it serves); alive while it serves.\n",
      "              readinessProbe:\n",                       //
      "                grpc:\n",                               //
      "                  port: ", kHealthPort, "\n",           //
      "                  service: readiness\n",                //
      "                periodSeconds: 5\n",                    //
      "                failureThreshold: 2\n",                 //
      "              livenessProbe:\n",                        //
      "                grpc:\n",                               //
      "                  port: ", kHealthPort, "\n",           //
      "                initialDelaySeconds: 10\n",             //
      "                periodSeconds: 10\n",                   //
      "                timeoutSeconds: 5\n",                   //
      "                failureThreshold: 3\n",                 //
      "              resources:\n",                            //
      "                requests:\n",                           //
      "                  cpu: ", Quoted(r.cpu_request), "\n",  //
      "                  memory: ", r.memory_request, "\n",    //
      "                limits:\n",                             //
      "                  cpu: ", Quoted(r.cpu_limit), "\n",    //
      "                  memory: ", r.memory_limit, "\n",      //
      "              securityContext:\n",                      //
      "                runAsNonRoot: true\n",                  //
      "                allowPrivilegeEscalation: false\n",     //
      "                readOnlyRootFilesystem: true\n",        //
      "                capabilities:\n",                       //
      "                  drop: [\"ALL\"]\n",                   //
      "              volumeMounts:\n",                         //
      pod.mounts,                                              //
      "          volumes:\n",                                  //
      pod.volumes);
}

std::string HealthAndMetricsArg(int port) {
  return absl::StrCat("--", port == kHealthPort ? "health_listen" : "metrics_listen",
                      "=0.0.0.0:", port);
}

// OK, or what kubectl would refuse in the options, named.
absl::Status CheckOptions(const TfJobManifestOptions& options) {
  if (absl::Status name = CheckDnsLabel(options.name, "the TFJob's name", kMaxTfJobNameLength);
      !name.ok()) {
    return name;
  }
  if (!options.namespace_name.empty()) {
    if (absl::Status ns = CheckDnsLabel(options.namespace_name, "the namespace"); !ns.ok()) {
      return ns;
    }
  }
  if (options.image.empty() || !IsPlainText(options.image) ||
      options.image.find(' ') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("the image '", options.image, "' is not an image reference"));
  }
  auto check_name = [](const char* what, const std::string& value) {
    return IsDnsSubdomain(value) ? absl::OkStatus()
                                 : absl::InvalidArgumentError(absl::StrCat(
                                       what, " '", value, "' is not a Kubernetes object name"));
  };
  if (absl::Status claim = check_name("the volume claim", options.volume_claim); !claim.ok()) {
    return claim;
  }
  for (const std::string* secret : {&options.tls_secret, &options.tokens_secret}) {
    if (secret->empty()) continue;
    if (absl::Status checked = check_name("the Secret", *secret); !checked.ok()) return checked;
  }
  if (options.num_ps < 1 || options.num_workers < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a job needs a parameter server and a worker; got ", options.num_ps, " and ",
                     options.num_workers));
  }
  if (options.ttl_secs < 0 || options.backoff_limit < 0) {
    return absl::InvalidArgumentError("the TTL and the backoff limit must be >= 0");
  }
  return absl::OkStatus();
}

// The TFJob's replicas, with their daemons' flags, sizes (those of
// deploy/k8s/tfjob) and grace periods.
std::vector<Replica> ReplicasOf(const TfJobManifestOptions& options) {
  const std::string checkpoint_root = absl::StrCat("--checkpoint_root=", kCheckpointRoot);
  const std::vector<std::string> listen = {HealthAndMetricsArg(kHealthPort),
                                           HealthAndMetricsArg(kMetricsPort)};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), listen.begin(), listen.end());
    return args;
  };
  std::vector<Replica> replicas = {
      {"Chief",
       "coordinator",
       "The coordinator runs the job of the ConfigMap and ends the cluster with it.",
       1,
       "pstrain-coordinator",
       with({absl::StrCat("--job=", kSpecDir, "/", options.spec_key), checkpoint_root,
             "--shutdown_grace_secs=60"}),
       {"250m", "256Mi", "1", "1Gi"},
       90,
       true,
       true},
      {"PS",
       "ps",
       "Parameter servers: TF_CONFIG's task.index is the shard.",
       options.num_ps,
       "pstrain-ps",
       with({checkpoint_root, "--shutdown_grace_secs=60"}),
       {"1", "4Gi", "2", "4Gi"},
       90,
       true,
       false},
      {"Worker",
       "worker",
       "Workers read the data from the volume and never write there.",
       options.num_workers,
       "pstrain-worker",
       with({}),
       {"1", "2Gi", "2", "2Gi"},
       30,
       false,
       false},
  };
  if (options.evaluator) {
    // The operator leaves the evaluator out of TF_CONFIG's cluster: --listen
    // gives it its port.
    replicas.push_back({"Evaluator",
                        "evaluator",
                        "The evaluator: evaluates checkpoints and exports the best model.",
                        1,
                        "pstrain-evaluator",
                        with({absl::StrCat("--listen=0.0.0.0:", kTfJobPort)}),
                        {"500m", "2Gi", "1", "4Gi"},
                        30,
                        true,
                        false});
  }
  return replicas;
}

// How to apply and watch the manifest, and what its pods' exit codes mean.
std::string HeaderComment(const TfJobManifestOptions& options) {
  return absl::StrCat(
      "# One pstrain training run as a Kubeflow TFJob, written by\n"
      "#   ",
      options.command_line,
      "\n"
      "#\n"
      "#   kubectl apply -f THIS_FILE\n"
      "#   kubectl get tfjob ",
      options.name, " -w                 # Created, Running, then Succeeded or Failed\n",
      "#   kubectl logs -f ", options.name, "-chief-0             # the job's progress\n",
      "#\n"
      "# Needs the training operator (kubeflow.org/v1), the image in every node's\n"
      "# reach, and in the namespace the ServiceAccount pstrain and the\n"
      "# PersistentVolumeClaim ",
      options.volume_claim,
      " with the job's data\n"
      "# (deploy/k8s/shared). The chief runs `pstrain-coordinator --job` on the spec below;\n"
      "# every pod exits once the job ends: 0 when it SUCCEEDED (the TFJob turns Succeeded),\n"
      "# 3 FAILED, 4 stopped (Failed). restartPolicy ExitCode restarts a pod that dies\n"
      "# of a signal (128 and up: a crash, the OOM killer, a coordinator stopped while\n"
      "# the job ran), and the job resumes from its newest checkpoint; 1 to 127 are final.\n"
      "# Running the same spec again needs a new model_dir: in the old one the\n"
      "# coordinator finds the finished run and exits with its outcome.\n");
}

}  // namespace

absl::Status CheckDnsLabel(const std::string& name, const std::string& what, int max_length) {
  auto refuse = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "' ", why));
  };
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " is empty"));
  if (static_cast<int>(name.size()) > max_length) {
    return refuse(absl::StrCat("is longer than ", max_length, " characters"));
  }
  if (!absl::ascii_islower(name.front())) return refuse("must start with a lowercase letter");
  if (name.back() == '-') return refuse("must not end with '-'");
  for (char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '-') {
      return refuse("may hold only lowercase letters, digits and '-'");
    }
  }
  return absl::OkStatus();
}

std::string TfJobNameFor(const std::string& job_name) {
  std::string name;
  for (char c : absl::AsciiStrToLower(job_name)) {
    const bool keep = absl::ascii_islower(c) || absl::ascii_isdigit(c);
    if (keep) {
      name.push_back(c);
    } else if (!name.empty() && name.back() != '-') {
      name.push_back('-');
    }
  }
  while (!name.empty() && !absl::ascii_islower(name.front())) name.erase(0, 1);
  if (name.size() > static_cast<size_t>(kMaxTfJobNameLength)) name.resize(kMaxTfJobNameLength);
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name.empty() ? "pstrain-job" : name;
}

absl::StatusOr<std::string> TfJobManifest(const TfJobManifestOptions& options) {
  if (absl::Status checked = CheckOptions(options); !checked.ok()) return checked;
  absl::StatusOr<std::string> spec = SpecBlock(options.spec_key, options.spec_text);
  if (!spec.ok()) return spec.status();

  std::string text = absl::StrCat(
      HeaderComment(options),
      "apiVersion: v1\n"
      "kind: ConfigMap\n",
      Metadata(options, options.name + "-job"), "data:\n", *spec,
      "---\n"
      "apiVersion: kubeflow.org/v1\n"
      "kind: TFJob\n",
      Metadata(options, options.name),
      "spec:\n"
      "  runPolicy:\n"
      "    # Pods still running when the TFJob ends are deleted; those that\n"
      "    # finished stay, with their logs, until the TFJob is.\n"
      "    cleanPodPolicy: Running\n",
      options.ttl_secs > 0
          ? absl::StrCat("    # The TFJob and its pods are deleted this long after it ends.\n",
                         "    ttlSecondsAfterFinished: ", options.ttl_secs, "\n")
          : std::string(),
      "    # Restarts of pods that crashed before the TFJob fails.\n"
      "    backoffLimit: ",
      options.backoff_limit,
      "\n"
      "  tfReplicaSpecs:\n");
  for (const Replica& replica : ReplicasOf(options)) {
    absl::StrAppend(&text, ReplicaText(options, replica));
  }
  return text;
}

}  // namespace pstrain
