// The manifests really run: every pod of the rendered dev overlay, of the
// prod overlay under mutual TLS (its Secrets made with a throw-away CA), and
// of the TFJob with the TF_CONFIG the training operator would inject, started
// as a local process with the container's command, arguments and
// environment, its ConfigMaps and volumes in a temporary folder. Service
// names and the pods' fixed ports become free loopback ports through
// PSTRAIN_HOST_ALIASES (common/net/host_aliases.h), as a cluster's DNS and
// pod networks would route them. Then `pstrain submit` queues the example
// click-log job from the pstrain-jobs ConfigMap, as a user would through
// `kubectl port-forward`, and the job must succeed with its checkpoints on
// the model_dir volume and the cluster must shut down cleanly.

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "client/binary_locator.h"
#include "common/net/health_client.h"
#include "common/process/child_process.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/k8s_manifest.h"
#include "common/net/testing/reserved_port.h"

namespace pstrain {
namespace {

using k8s_testing::ContainerEnv;
using k8s_testing::ExpandEnvReferences;
using k8s_testing::ExpandPods;
using k8s_testing::Find;
using k8s_testing::FindObject;
using k8s_testing::ListAt;
using k8s_testing::NumberAt;
using k8s_testing::ObjectsOfKind;
using k8s_testing::Pod;
using k8s_testing::RenderManifests;
using k8s_testing::RunShell;
using k8s_testing::SelectorMatches;
using k8s_testing::StringAt;
using k8s_testing::Value;

// The example job of the pstrain-jobs ConfigMap: 300 steps of logistic
// regression on synthetic click logs.
constexpr char kJobFile[] = "clicks_logistic.pbtxt";
constexpr char kJobModelDir[] = "clicks-logistic";
constexpr int kJobMaxSteps = 300;

// The container port a Service's targetPort or a probe names.
int NamedPort(const Value& container, const Value& ref) {
  for (const Value* port : ListAt(container, "ports")) {
    if ((ref.has_string_value() && StringAt(*port, "name") == ref.string_value()) ||
        NumberAt(*port, "containerPort") == ref.number_value()) {
      return static_cast<int>(NumberAt(*port, "containerPort"));
    }
  }
  return 0;
}

// One pod run as a process.
struct LocalPod {
  const Pod* pod;
  const Value* container;
  std::string binary;
  std::map<int, int> ports;                   // containerPort -> loopback port
  std::map<std::string, std::string> mounts;  // mountPath -> local folder
  std::unique_ptr<ChildProcess> process;
  std::string log;
};

// What the operator of a cluster creates by hand: Secret name -> key ->
// contents.
using Secrets = std::map<std::string, std::map<std::string, std::string>>;

class ManifestCluster {
 public:
  // Lays out volumes, ports and aliases for every pod of `objects`, Secret
  // volumes from `secrets`; starts nothing yet.
  ManifestCluster(std::vector<Value> objects, const std::string& root, Secrets secrets = {})
      : objects_(std::move(objects)),
        pods_(ExpandPods(objects_)),
        root_(root),
        secrets_(std::move(secrets)) {
    std::filesystem::create_directories(root_);
    for (const Pod& pod : pods_) {
      const std::vector<const Value*> containers = ListAt(*pod.spec, "containers");
      EXPECT_EQ(containers.size(), 1u) << pod.name;
      if (containers.empty()) continue;
      LocalPod local{&pod, containers[0], "", {}, {}, nullptr, root_ + "/" + pod.name + ".log"};
      local.binary = std::filesystem::path(ListAt(*containers[0], "command")[0]->string_value())
                         .filename()
                         .string();
      // The daemons bind the loopback ports given to them, as they bind
      // their fixed ports in a pod; each is held for them until they serve.
      for (const Value* port : ListAt(*containers[0], "ports")) {
        absl::StatusOr<testing_net::ReservedPort> reserved =
            testing_net::ReservedPort::OnLoopback();
        EXPECT_TRUE(reserved.ok()) << reserved.status();
        if (!reserved.ok()) continue;
        local.ports[static_cast<int>(NumberAt(*port, "containerPort"))] = reserved->port();
        reserved_ports_.push_back(*std::move(reserved));
      }
      MountVolumes(local);
      local_.push_back(std::move(local));
    }
    AliasServices();
  }

  ~ManifestCluster() {
    for (LocalPod& local : local_) {
      if (local.process != nullptr) local.process->Stop(absl::Seconds(5));
    }
  }

  // Starts every pod's process at once, as a cluster does, and waits until
  // each answers its readiness probe. `tf_config` gives a pod's TF_CONFIG
  // ("" for none).
  void StartAndWaitReady(const std::function<std::string(const LocalPod&)>& tf_config) {
    for (LocalPod& local : local_) {
      absl::StatusOr<std::string> program = LocateBinary(local.binary, "");
      ASSERT_TRUE(program.ok()) << program.status();
      absl::StatusOr<std::map<std::string, std::string>> env =
          ContainerEnv(*local.container, *local.pod, objects_);
      ASSERT_TRUE(env.ok()) << env.status();
      ChildProcessOptions options;
      options.program = *program;
      options.log_path = local.log;
      for (const Value* arg : ListAt(*local.container, "args")) {
        options.args.push_back(
            OnLocalVolumes(local, ExpandEnvReferences(arg->string_value(), *env)));
      }
      for (const auto& [name, value] : *env) {
        options.env.push_back(absl::StrCat(name, "=", OnLocalVolumes(local, value)));
      }
      // The pod's own network: its fixed ports on 0.0.0.0 are its own.
      std::vector<std::string> aliases = service_aliases_;
      for (const auto& [port, local_port] : local.ports) {
        aliases.push_back(absl::StrCat("0.0.0.0:", port, "=127.0.0.1:", local_port));
      }
      options.env.push_back(absl::StrCat("PSTRAIN_HOST_ALIASES=", absl::StrJoin(aliases, ",")));
      if (std::string config = tf_config(local); !config.empty()) {
        options.env.push_back("TF_CONFIG=" + config);
      }
      absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(options);
      ASSERT_TRUE(child.ok()) << child.status();
      local.process = *std::move(child);
    }
    for (LocalPod& local : local_) {
      const int probe_port = ProbePort(local);
      ASSERT_GT(probe_port, 0) << local.pod->name;
      const absl::Time deadline = absl::Now() + absl::Seconds(60);
      absl::Status health;
      do {
        if (std::optional<ExitStatus> exit = local.process->Poll()) {
          FAIL() << local.pod->name << " exited (" << exit->ToString() << "):\n" << Log(local);
        }
        // As the kubelet asks: the readiness probe's service, if it names one.
        health = CheckHealth(absl::StrCat("127.0.0.1:", probe_port), absl::Seconds(1),
                             StringAt(*local.container, "readinessProbe.grpc.service"));
        if (!health.ok()) absl::SleepFor(absl::Milliseconds(200));
      } while (!health.ok() && absl::Now() < deadline);
      ASSERT_TRUE(health.ok()) << local.pod->name << " never became ready: " << health << "\n"
                               << Log(local);
    }
    // Every daemon binds its ports before it is ready.
    reserved_ports_.clear();
  }

  // Where `pstrain` reaches the coordinator: its gRPC port (named grpc, or
  // tfjob-port in a TFJob), what `kubectl port-forward` would forward.
  std::string CoordinatorAddress() const {
    const LocalPod& coordinator = Role("pstrain-coordinator");
    for (const char* name : {"grpc", "tfjob-port"}) {
      Value ref;
      ref.set_string_value(name);
      if (const int port = NamedPort(*coordinator.container, ref); port > 0) {
        return absl::StrCat("127.0.0.1:", coordinator.ports.at(port));
      }
    }
    ADD_FAILURE() << coordinator.pod->name << " has no port named grpc or tfjob-port";
    return "";
  }
  // The loopback ports of every pod's port named `name`.
  std::vector<std::pair<std::string, int>> PortsNamed(const std::string& name) const {
    Value ref;
    ref.set_string_value(name);
    std::vector<std::pair<std::string, int>> ports;
    for (const LocalPod& local : local_) {
      const int port = NamedPort(*local.container, ref);
      if (port > 0) ports.push_back({local.pod->name, local.ports.at(port)});
    }
    return ports;
  }
  // The coordinator pod's copy of a mounted path.
  std::string CoordinatorPath(const std::string& path) const {
    return OnLocalVolumes(Role("pstrain-coordinator"), path);
  }

  // SIGTERM to workers and the evaluator, then parameter servers, then the
  // coordinator; each must exit 0 within its pod's grace.
  void StopCleanly() {
    for (const char* binary :
         {"pstrain-worker", "pstrain-evaluator", "pstrain-ps", "pstrain-coordinator"}) {
      for (LocalPod& local : local_) {
        if (local.binary != binary || local.process == nullptr) continue;
        const ExitStatus exit = local.process->Stop(
            absl::Seconds(NumberAt(*local.pod->spec, "terminationGracePeriodSeconds")));
        EXPECT_TRUE(exit.ok()) << local.pod->name << ": " << exit.ToString() << "\n" << Log(local);
        local.process.reset();
      }
    }
  }

  // Waits until every pod's process has ended by itself, as a one-shot
  // cluster's do once its job ends; how each ended, by pod name. A pod
  // still running at `timeout` fails the test and is left to the
  // destructor.
  std::map<std::string, ExitStatus> AwaitEnd(absl::Duration timeout) {
    std::map<std::string, ExitStatus> ended;
    const absl::Time deadline = absl::Now() + timeout;
    while (ended.size() < local_.size() && absl::Now() < deadline) {
      for (LocalPod& local : local_) {
        if (ended.count(local.pod->name) > 0 || local.process == nullptr) continue;
        if (std::optional<ExitStatus> exit = local.process->Poll()) {
          ended[local.pod->name] = *exit;
        }
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    for (const LocalPod& local : local_) {
      EXPECT_EQ(ended.count(local.pod->name), 1u)
          << local.pod->name << " still runs after " << absl::FormatDuration(timeout) << "\n"
          << Log(local);
    }
    return ended;
  }

  std::string Logs() const {
    std::string logs;
    for (const LocalPod& local : local_) {
      absl::StrAppend(&logs, "---- ", local.pod->name, " ----\n", Log(local));
    }
    return logs;
  }

  const std::vector<LocalPod>& pods() const { return local_; }

 private:
  const LocalPod& Role(absl::string_view binary) const {
    for (const LocalPod& local : local_) {
      if (local.binary == binary) return local;
    }
    ADD_FAILURE() << "no " << binary;
    return local_.front();
  }

  static std::string Log(const LocalPod& local) {
    std::ifstream in(local.log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
  }

  static int ProbePort(const LocalPod& local) {
    const Value* port = Find(*local.container, "readinessProbe.grpc.port");
    if (port == nullptr) return 0;
    auto it = local.ports.find(static_cast<int>(port->number_value()));
    return it == local.ports.end() ? 0 : it->second;
  }

  // Each volume of the pod as a local folder: a claim is shared by every
  // pod that mounts it, a ConfigMap's keys become files, so do a Secret's
  // (its items only, when it lists some), an emptyDir is the pod's own.
  void MountVolumes(LocalPod& local) {
    std::map<std::string, const Value*> volumes;
    for (const Value* volume : ListAt(*local.pod->spec, "volumes")) {
      volumes[StringAt(*volume, "name")] = volume;
    }
    for (const Value* mount : ListAt(*local.container, "volumeMounts")) {
      const std::string name = StringAt(*mount, "name");
      ASSERT_EQ(volumes.count(name), 1u) << local.pod->name << ": volume " << name;
      const Value& volume = *volumes[name];
      std::string dir;
      if (const Value* claim = Find(volume, "persistentVolumeClaim")) {
        dir = root_ + "/claims/" + StringAt(*claim, "claimName");
      } else if (const Value* map = Find(volume, "configMap")) {
        dir = root_ + "/" + local.pod->name + "/" + name;
        const Value* object = FindObject(objects_, "ConfigMap", StringAt(*map, "name"));
        ASSERT_NE(object, nullptr) << local.pod->name << ": ConfigMap " << StringAt(*map, "name");
        std::filesystem::create_directories(dir);
        for (const auto& [key, text] : Find(*object, "data")->struct_value().fields()) {
          std::ofstream(dir + "/" + key) << text.string_value();
        }
      } else if (const Value* secret = Find(volume, "secret")) {
        dir = root_ + "/" + local.pod->name + "/" + name;
        auto found = secrets_.find(StringAt(*secret, "secretName"));
        ASSERT_NE(found, secrets_.end())
            << local.pod->name << ": Secret " << StringAt(*secret, "secretName");
        std::map<std::string, std::string> files;  // path in the volume -> key
        for (const Value* item : ListAt(*secret, "items")) {
          files[StringAt(*item, "path")] = StringAt(*item, "key");
        }
        if (files.empty()) {
          for (const auto& [key, text] : found->second) files[key] = key;
        }
        std::filesystem::create_directories(dir);
        for (const auto& [path, key] : files) {
          auto text = found->second.find(key);
          ASSERT_NE(text, found->second.end())
              << local.pod->name << ": Secret " << found->first << " has no key " << key;
          std::ofstream(dir + "/" + path) << text->second;
        }
      } else if (Find(volume, "emptyDir") != nullptr) {
        dir = root_ + "/" + local.pod->name + "/" + name;
      } else {
        FAIL() << local.pod->name << ": volume " << name << " cannot be run locally";
      }
      std::filesystem::create_directories(dir);
      local.mounts[StringAt(*mount, "mountPath")] = dir;
    }
  }

  // `text` with each mount path of the pod replaced by its local folder.
  static std::string OnLocalVolumes(const LocalPod& local, const std::string& text) {
    std::string result = text;
    // Longest first, so /etc/pstrain/jobs wins over a mount at /etc/pstrain.
    std::vector<std::pair<std::string, std::string>> mounts(local.mounts.begin(),
                                                            local.mounts.end());
    std::sort(mounts.begin(), mounts.end(),
              [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (const auto& [path, dir] : mounts) {
      if (absl::StartsWith(result, path)) return dir + result.substr(path.size());
      if (const size_t at = result.find("=" + path); at != std::string::npos) {
        return result.substr(0, at + 1) + dir + result.substr(at + 1 + path.size());
      }
    }
    return result;
  }

  // What a cluster's DNS resolves and its Services route: every name a
  // Service gives a pod's port, in each of its spellings.
  void AliasServices() {
    auto add = [&](const std::string& host, int port, int local_port) {
      const std::string target = absl::StrCat("=127.0.0.1:", local_port);
      for (const std::string& suffix :
           {std::string(), "." + namespace_name(), "." + namespace_name() + ".svc",
            "." + namespace_name() + ".svc.cluster.local"}) {
        service_aliases_.push_back(absl::StrCat(host, suffix, ":", port, target));
      }
    };
    for (const Value* service : ObjectsOfKind(objects_, "Service")) {
      const std::string name = StringAt(*service, "metadata.name");
      const bool headless = StringAt(*service, "spec.clusterIP") == "None";
      std::vector<const LocalPod*> selected;
      for (const LocalPod& local : local_) {
        if (SelectorMatches(*Find(*service, "spec.selector"), local.pod->labels)) {
          selected.push_back(&local);
        }
      }
      // One local process cannot load-balance: a ClusterIP Service here
      // fronts one pod.
      if (!headless) {
        ASSERT_EQ(selected.size(), 1u) << "Service " << name;
      }
      for (const Value* port : ListAt(*service, "spec.ports")) {
        for (const LocalPod* local : selected) {
          const int target = NamedPort(*local->container, *Find(*port, "targetPort"));
          ASSERT_GT(target, 0) << "Service " << name << " -> " << local->pod->name;
          const int service_port = static_cast<int>(NumberAt(*port, "port"));
          if (!headless) {
            add(name, service_port, local->ports.at(target));
          } else if (local->pod->subdomain == name) {
            add(local->pod->name + "." + name, service_port, local->ports.at(target));
          }
        }
      }
    }
    // The TFJob operator's Service per replica, named after its pod, on the
    // port named tfjob-port.
    for (const LocalPod& local : local_) {
      if (local.pod->replica_type.empty()) continue;
      Value name;
      name.set_string_value("tfjob-port");
      const int port = NamedPort(*local.container, name);
      ASSERT_GT(port, 0) << local.pod->name;
      add(local.pod->name, port, local.ports.at(port));
    }
  }

  std::string namespace_name() const { return pods_.front().namespace_name; }

  const std::vector<Value> objects_;
  const std::vector<Pod> pods_;
  const std::string root_;
  const Secrets secrets_;
  std::vector<LocalPod> local_;
  std::vector<std::string> service_aliases_;
  // The pods' loopback ports, until their processes serve on them.
  std::vector<testing_net::ReservedPort> reserved_ports_;
};

// The TF_CONFIG Kubeflow's training operator injects into a replica: every
// replica type but the evaluator in cluster, addresses
// <job>-<type>-<index>.<namespace>.svc:<tfjob-port>.
std::string OperatorTfConfig(const std::vector<LocalPod>& pods, const LocalPod& self) {
  std::map<std::string, std::vector<std::string>> cluster;
  for (const LocalPod& local : pods) {
    if (local.pod->replica_type == "evaluator") continue;
    Value name;
    name.set_string_value("tfjob-port");
    cluster[local.pod->replica_type].resize(
        std::max<size_t>(cluster[local.pod->replica_type].size(), local.pod->index + 1));
    cluster[local.pod->replica_type][local.pod->index] =
        absl::StrCat("\"", local.pod->name, ".", local.pod->namespace_name,
                     ".svc:", NamedPort(*local.container, name), "\"");
  }
  std::vector<std::string> lists;
  for (const auto& [type, addresses] : cluster) {
    lists.push_back(absl::StrCat("\"", type, "\": [", absl::StrJoin(addresses, ", "), "]"));
  }
  return absl::StrCat("{\"cluster\": {", absl::StrJoin(lists, ", "), "}, \"task\": {\"type\": \"",
                      self.pod->replica_type, "\", \"index\": ", self.pod->index,
                      "}, \"environment\": \"cloud\"}");
}

google::protobuf::Struct ParseJson(const std::string& json) {
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json;
  return parsed;
}

void ExpectFinalCheckpoint(const std::string& claims_dir, int64_t max_steps);

// Submits the example job with the CLI (given `client_flags` besides the
// coordinator's address), follows it to its end, and checks that it
// succeeded with its checkpoints on the model_dir volume.
void SubmitExampleJobAndExpectSuccess(ManifestCluster& cluster, const std::string& claims_dir,
                                      const std::string& client_flags = "") {
  absl::StatusOr<std::string> pstrain = LocateBinary("pstrain", "");
  ASSERT_TRUE(pstrain.ok()) << pstrain.status();
  const std::string coordinator =
      absl::StrCat("--coordinator_address=", cluster.CoordinatorAddress(), " ", client_flags);
  const std::string spec = cluster.CoordinatorPath(absl::StrCat("/etc/pstrain/jobs/", kJobFile));

  absl::StatusOr<std::string> submitted =
      RunShell(absl::StrCat(*pstrain, " submit ", spec, " ", coordinator, " --output=json"));
  ASSERT_TRUE(submitted.ok()) << submitted.status() << "\n" << cluster.Logs();
  const std::string job_id = ParseJson(*submitted).fields().at("job_id").string_value();
  ASSERT_FALSE(job_id.empty()) << *submitted;

  absl::StatusOr<std::string> watched =
      RunShell(absl::StrCat(*pstrain, " watch ", job_id, " ", coordinator));
  ASSERT_TRUE(watched.ok()) << "the job did not succeed: " << watched.status() << "\n"
                            << cluster.Logs();
  absl::StatusOr<std::string> status =
      RunShell(absl::StrCat(*pstrain, " status ", job_id, " ", coordinator, " --output=json"));
  ASSERT_TRUE(status.ok()) << status.status();
  const google::protobuf::Struct fields = ParseJson(*status);
  EXPECT_EQ(fields.fields().at("state").string_value(), "SUCCEEDED") << *status;
  EXPECT_GE(fields.fields().at("global_step").number_value(), kJobMaxSteps) << *status;
  ExpectFinalCheckpoint(claims_dir, kJobMaxSteps);
}

// The example job's final checkpoint, at `max_steps` or after it, MANIFEST
// last, on the shared claim.
void ExpectFinalCheckpoint(const std::string& claims_dir, int64_t max_steps) {
  bool final_checkpoint = false;
  const std::filesystem::path model_dir =
      std::filesystem::path(claims_dir) / "pstrain-model-dir" / kJobModelDir;
  ASSERT_TRUE(std::filesystem::is_directory(model_dir)) << model_dir;
  for (const auto& entry : std::filesystem::directory_iterator(model_dir)) {
    const std::string file = entry.path().filename().string();
    absl::string_view name = file;
    int64_t step = 0;
    if (absl::ConsumePrefix(&name, "ckpt-") && absl::SimpleAtoi(name, &step) && step >= max_steps &&
        std::filesystem::exists(entry.path() / "MANIFEST")) {
      final_checkpoint = true;
    }
  }
  EXPECT_TRUE(final_checkpoint) << "no checkpoint at step >= " << max_steps << " in " << model_dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The Secrets the prod overlay mounts, as deploy/README.md has the operator
// make them with openssl, from a throw-away CA: one certificate for every
// daemon (server and client), one for the `pstrain` client (client.crt and
// client.key under `dir`), and the two tokens (client.token in `dir` too).
// Besides the README's names, the daemons' certificate names 127.0.0.1: the
// host aliases make every daemon dial loopback.
Secrets MakeProdSecrets(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::string commands = absl::StrCat(
      "cd ", dir, " && ",
      "printf 'subjectAltName=DNS:pstrain-coordinator,DNS:pstrain-coordinator.pstrain.svc,"
      "DNS:*.pstrain-ps,DNS:*.pstrain-ps.pstrain.svc,DNS:localhost,IP:127.0.0.1\\n"
      "extendedKeyUsage=serverAuth,clientAuth\\n' "
      "> san.cnf && ",
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 "
      "-subj '/CN=pstrain test CA' 2>&1 && ",
      "openssl req -newkey rsa:2048 -nodes -keyout tls.key -out tls.csr "
      "-subj '/CN=pstrain' 2>&1 && ",
      "openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out tls.crt "
      "-days 1 -extfile san.cnf 2>&1 && ",
      "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr "
      "-subj '/CN=pstrain client' 2>&1 && ",
      "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
      "-out client.crt -days 1 2>&1 && ",
      "printf client-token-3b9d1f > client.token && printf cluster-token-c04e7a > cluster.token");
  absl::StatusOr<std::string> made = RunShell(commands);
  EXPECT_TRUE(made.ok()) << made.status();
  return {{"pstrain-tls",
           {{"tls.crt", ReadFile(dir + "/tls.crt")},
            {"tls.key", ReadFile(dir + "/tls.key")},
            {"ca.crt", ReadFile(dir + "/ca.crt")}}},
          {"pstrain-tokens",
           {{"client-token", ReadFile(dir + "/client.token")},
            {"cluster-token", ReadFile(dir + "/cluster.token")}}}};
}

TEST(K8sRunTest, DevOverlayTrainsTheExampleJob) {
  absl::StatusOr<std::vector<Value>> objects = RenderManifests("overlays/dev");
  ASSERT_TRUE(objects.ok()) << objects.status();
  const std::string root = testing::TempDir() + "/dev";
  ManifestCluster cluster(*std::move(objects), root);
  ASSERT_EQ(cluster.pods().size(), 4u) << "coordinator, ps, worker, evaluator";
  ASSERT_NO_FATAL_FAILURE(cluster.StartAndWaitReady([](const LocalPod&) { return ""; }))
      << cluster.Logs();
  ASSERT_NO_FATAL_FAILURE(SubmitExampleJobAndExpectSuccess(cluster, root + "/claims"));
  cluster.StopCleanly();
}

TEST(K8sRunTest, TfJobTrainsTheExampleJobFromTfConfig) {
  absl::StatusOr<std::vector<Value>> objects = RenderManifests("tfjob");
  ASSERT_TRUE(objects.ok()) << objects.status();
  const std::string root = testing::TempDir() + "/tfjob";
  ManifestCluster cluster(*std::move(objects), root);
  ASSERT_EQ(cluster.pods().size(), 6u) << "chief, 2 ps, 2 workers, evaluator";
  ASSERT_NO_FATAL_FAILURE(cluster.StartAndWaitReady([&cluster](const LocalPod& self) {
    return OperatorTfConfig(cluster.pods(), self);
  })) << cluster.Logs();
  ASSERT_NO_FATAL_FAILURE(SubmitExampleJobAndExpectSuccess(cluster, root + "/claims"));
  cluster.StopCleanly();
}

// What `pstrain k8s` writes for one run: the chief runs the job of its
// ConfigMap (pstrain-coordinator --job) as the pods start, and every pod
// exits 0 once it SUCCEEDED, after the final checkpoint; nobody submits or
// shuts anything down.
TEST(K8sRunTest, GeneratedTfJobRunsItsJobOnceAndEveryPodExitsZero) {
  absl::StatusOr<std::vector<Value>> objects = RenderManifests(k8s_testing::kGeneratedTfJob);
  ASSERT_TRUE(objects.ok()) << objects.status();
  const std::string root = testing::TempDir() + "/generated";
  ManifestCluster cluster(*std::move(objects), root);
  ASSERT_EQ(cluster.pods().size(), 6u) << "chief, 2 ps, 2 workers, evaluator";
  ASSERT_NO_FATAL_FAILURE(cluster.StartAndWaitReady([&cluster](const LocalPod& self) {
    return OperatorTfConfig(cluster.pods(), self);
  })) << cluster.Logs();
  const std::map<std::string, ExitStatus> ended = cluster.AwaitEnd(absl::Minutes(3));
  for (const auto& [pod, exit] : ended) EXPECT_TRUE(exit.ok()) << pod << ": " << exit.ToString();
  ExpectFinalCheckpoint(root + "/claims", k8s_testing::kGeneratedTfJobSteps);
}

// The prod overlay as it is: 4 parameter servers, 8 workers, every channel
// under mutual TLS with both tokens from its Secrets. Probes reach every pod
// on its plaintext health port; its gRPC port refuses plaintext; the job
// runs with the client's certificate and token.
TEST(K8sRunTest, ProdOverlayTrainsTheExampleJobUnderMutualTls) {
  absl::StatusOr<std::vector<Value>> objects = RenderManifests("overlays/prod");
  ASSERT_TRUE(objects.ok()) << objects.status();
  const std::string root = testing::TempDir() + "/prod";
  const std::string ca_dir = root + "-ca";
  Secrets secrets = MakeProdSecrets(ca_dir);
  ASSERT_FALSE(secrets["pstrain-tls"]["tls.crt"].empty()) << "openssl made no certificate";
  ManifestCluster cluster(*std::move(objects), root, secrets);
  ASSERT_EQ(cluster.pods().size(), 14u) << "coordinator, 4 ps, 8 workers, evaluator";
  ASSERT_NO_FATAL_FAILURE(cluster.StartAndWaitReady([](const LocalPod&) { return ""; }))
      << cluster.Logs();
  for (const auto& [pod, port] : cluster.PortsNamed("grpc")) {
    EXPECT_FALSE(CheckHealth(absl::StrCat("127.0.0.1:", port), absl::Seconds(2)).ok())
        << pod << " answers plaintext on its gRPC port";
  }
  ASSERT_NO_FATAL_FAILURE(SubmitExampleJobAndExpectSuccess(
      cluster, root + "/claims",
      absl::StrCat("--tls_ca=", ca_dir, "/ca.crt --tls_cert=", ca_dir, "/client.crt --tls_key=",
                   ca_dir, "/client.key --client_token_file=", ca_dir, "/client.token")));
  cluster.StopCleanly();
}

}  // namespace
}  // namespace pstrain
