#include "client/k8s_command.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/exit_code.h"
#include "client/job_spec_file.h"
#include "client/tfjob_manifest.h"
#include "common/checkpoint/file_path.h"
#include "common/checkpoint/posix_env.h"
#include "common/checkpoint/whole_file.h"
#include "common/config/job_spec_parser.h"
#include "gflags/gflags.h"

// Shared with `pstrain local` (local_command.cc).
DECLARE_int32(ps);
DECLARE_int32(workers);
DECLARE_bool(evaluator);

DEFINE_string(image, "pstrain:latest",
              "k8s: the image every pod runs (deploy/docker; the binaries in /usr/local/bin)");
DEFINE_string(tfjob_name, "",
              "k8s: the TFJob's name, also its pods' prefix; default: the job spec's name, "
              "lowercased, with '-' for what a name may not hold");
DEFINE_string(namespace, "",
              "k8s: the namespace written into every object; default: none, kubectl's current "
              "namespace");
DEFINE_string(volume_claim, "pstrain-model-dir",
              "k8s: the PersistentVolumeClaim mounted at /var/lib/pstrain in every pod, the "
              "checkpoint root that model_dir is relative to, with the job's data");
DEFINE_string(tls_secret, "",
              "k8s: a Secret with tls.crt, tls.key and ca.crt: mutual TLS on every channel, as "
              "in deploy/k8s/overlays/prod; default: plaintext");
DEFINE_string(tokens_secret, "",
              "k8s: a Secret with client-token and cluster-token: bearer tokens on every call; "
              "default: none");
DEFINE_int32(ttl_secs, 0,
             "k8s: delete the TFJob and its pods this long after it ends "
             "(runPolicy.ttlSecondsAfterFinished); 0: keep them, and their logs, until deleted");

namespace pstrain {
namespace {

constexpr char kCheckpointRoot[] = "/var/lib/pstrain";

// The command as it could be typed again, with every value the manifest
// was written from.
std::string CommandLine(const std::string& spec_path, const TfJobManifestOptions& options) {
  std::vector<std::string> parts = {"pstrain k8s", spec_path, absl::StrCat("--ps=", options.num_ps),
                                    absl::StrCat("--workers=", options.num_workers),
                                    absl::StrCat("--image=", options.image)};
  if (!options.evaluator) parts.push_back("--noevaluator");
  if (!FLAGS_tfjob_name.empty()) parts.push_back("--tfjob_name=" + options.name);
  if (!options.namespace_name.empty()) parts.push_back("--namespace=" + options.namespace_name);
  if (options.volume_claim != "pstrain-model-dir") {
    parts.push_back("--volume_claim=" + options.volume_claim);
  }
  if (!options.tls_secret.empty()) parts.push_back("--tls_secret=" + options.tls_secret);
  if (!options.tokens_secret.empty()) parts.push_back("--tokens_secret=" + options.tokens_secret);
  if (options.ttl_secs > 0) parts.push_back(absl::StrCat("--ttl_secs=", options.ttl_secs));
  return absl::StrJoin(parts, " ");
}

int RunK8sCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain k8s: expected one argument, the job spec file; got " << args.size()
              << " (see pstrain k8s --help)\n";
    return kExitUsage;
  }
  const std::string& path = args[0];
  absl::StatusOr<JobSpec> spec = LoadCheckedJobSpec(path);
  if (!spec.ok()) {
    std::cerr << "pstrain k8s: " << spec.status().message() << "\n";
    return kExitUsage;
  }
  const std::string& model_dir = spec->checkpoint().model_dir();
  if (absl::StartsWith(model_dir, "/") && !IsPathUnder(model_dir, kCheckpointRoot)) {
    std::cerr << "pstrain k8s: " << path << ": checkpoint.model_dir '" << model_dir
              << "' is outside the pods' checkpoint root " << kCheckpointRoot
              << " (the volume claim); make it relative\n";
    return kExitUsage;
  }
  PosixEnv env;
  absl::StatusOr<std::string> text = ReadWholeFile(env, path, kMaxJobSpecFileBytes);
  if (!text.ok()) {
    std::cerr << "pstrain k8s: " << text.status().message() << "\n";
    return kExitUsage;
  }
  TfJobManifestOptions options;
  options.name = FLAGS_tfjob_name.empty() ? TfJobNameFor(spec->name()) : FLAGS_tfjob_name;
  options.namespace_name = FLAGS_namespace;
  options.image = FLAGS_image;
  options.num_ps = FLAGS_ps > 0 ? FLAGS_ps : 1;
  options.num_workers = FLAGS_workers;
  options.evaluator = FLAGS_evaluator;
  options.volume_claim = FLAGS_volume_claim;
  options.tls_secret = FLAGS_tls_secret;
  options.tokens_secret = FLAGS_tokens_secret;
  options.ttl_secs = FLAGS_ttl_secs;
  options.spec_key = absl::EndsWithIgnoreCase(path, ".json") ? "job.json" : "job.pbtxt";
  options.spec_text = *std::move(text);
  options.command_line = CommandLine(path, options);
  absl::StatusOr<std::string> manifest = TfJobManifest(options);
  if (!manifest.ok()) {
    std::cerr << "pstrain k8s: " << manifest.status().message() << "\n";
    return kExitUsage;
  }
  std::cout << *manifest;
  std::cerr << "pstrain k8s: TFJob " << options.name << " (" << options.num_ps
            << " parameter server" << (options.num_ps == 1 ? "" : "s") << ", "
            << options.num_workers << " worker" << (options.num_workers == 1 ? "" : "s")
            << (options.evaluator ? ", an evaluator" : "") << ") and ConfigMap " << options.name
            << "-job; apply with kubectl apply -f FILE\n";
  return kExitSuccess;
}

}  // namespace

Subcommand K8sCommand() {
  return {"k8s",
          "JOB.pbtxt [--ps=N] [--workers=M] [--image=IMAGE] > run.yaml",
          "write a Kubeflow TFJob that runs one job",
          "Writes one training run as Kubernetes objects, for `kubectl apply -f`: a\n"
          "ConfigMap NAME-job holding the job spec as written, and a Kubeflow TFJob\n"
          "(kubeflow.org/v1) NAME whose pods run it once. The chief runs\n"
          "`pstrain-coordinator --job` on the spec (docs/daemons.md, \"One job per\n"
          "cluster\"); the parameter servers, workers and evaluator join it, and every pod\n"
          "exits when the job ends: 0 when it SUCCEEDED, and the TFJob turns Succeeded;\n"
          "3 FAILED or 4 stopped, and it turns Failed. A pod that crashes or is stopped\n"
          "by a signal is restarted (restartPolicy ExitCode) and the job resumes from its\n"
          "newest checkpoint.\n"
          "\n"
          "The spec is checked first. Its model_dir is relative to /var/lib/pstrain, the\n"
          "volume claim (--volume_claim) every pod mounts; its data paths are read in the\n"
          "pods, so the data must be on that volume too (or in the image). Pods, probes, resources and security settings are those of\n"
          "deploy/k8s/tfjob; edit the file for other sizes. With --tls_secret and\n"
          "--tokens_secret, every channel runs under mutual TLS with tokens, as the prod\n"
          "overlay does (deploy/README.md, \"TLS and tokens\"). The YAML goes to stdout,\n"
          "a summary to stderr.\n"
          "\n"
          "Exit codes: 0 written; 2 bad usage, an invalid spec or name.\n"
          "\n"
          "Example:\n"
          "  pstrain k8s deploy/k8s/shared/jobs/fashion_mnist_mlp.pbtxt --ps=2 --workers=4 "
          "--image=registry.example.com/pstrain:1.0 > run.yaml\n"
          "  kubectl apply -f run.yaml && kubectl get tfjob fashion-mnist-mlp -w",
          {"ps", "workers", "evaluator", "image", "tfjob_name", "namespace", "volume_claim",
           "tls_secret", "tokens_secret", "ttl_secs"},
          RunK8sCommand};
}

}  // namespace pstrain
