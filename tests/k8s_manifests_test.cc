// The Kubernetes manifests (deploy/k8s) and the image (deploy/docker) as a
// reviewer would check them, on every rendering a user can deploy: the dev,
// prod and colocated overlays and the TFJob. Rendered with the kubectl on
// PATH; no cluster and no container engine are needed.
//
// What must hold: every container has gRPC probes on a port that answers
// them in plaintext (its health port, never a TLS port), requests and
// limits, a non-root read-only securityContext, a termination grace longer
// than its own shutdown grace; every flag it is given is one its binary
// accepts (from the binary's own --helpfull); names, ports, selectors and
// Services agree, looked up across every container of a pod (the colocated
// overlay runs a worker and a shard in one pod), and the containers of a
// pod share no port; the cluster's shape (ps and worker counts) is the
// same everywhere it is written; budgets, network policies and monitors
// reach every container's ports; the prod overlay runs every channel under
// mutual TLS with both tokens, from mounted Secrets; the colocated overlay
// pairs each shard with one worker; the example job specs are valid; and
// the image installs a package for every shared library the binaries load.

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/binary_locator.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/net/host_port.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/k8s_manifest.h"

namespace pstrain {
namespace {

using k8s_testing::BoolAt;
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
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Where the image puts the binaries (deploy/docker/Dockerfile).
constexpr char kBinDir[] = "/usr/local/bin/";
constexpr const char* kBinaries[] = {"pstrain", "pstrain-coordinator", "pstrain-ps",
                                     "pstrain-worker", "pstrain-evaluator"};

std::string ReadFile(const std::string& path) {
  std::stringstream contents;
  contents << std::ifstream(path).rdbuf();
  return contents.str();
}

// The flag names `binary --helpfull` lists ("  -listen (host:port ...").
std::set<std::string> AcceptedFlags(const std::string& binary) {
  static std::map<std::string, std::set<std::string>> cache;
  if (auto it = cache.find(binary); it != cache.end()) return it->second;
  std::set<std::string> flags;
  absl::StatusOr<std::string> program = LocateBinary(binary, "");
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return flags;
  absl::StatusOr<std::string> help = RunShell(absl::StrCat(*program, " --helpfull"));
  EXPECT_TRUE(help.ok()) << help.status();
  if (!help.ok()) return flags;
  for (absl::string_view line : absl::StrSplit(*help, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "-")) continue;
    const size_t end = line.find(" (");
    if (end != absl::string_view::npos) flags.insert(std::string(line.substr(0, end)));
  }
  EXPECT_THAT(flags, Contains("listen")) << binary << " --helpfull printed:\n" << *help;
  cache[binary] = flags;
  return flags;
}

// "--name=value" -> {name, value}; anything else -> {"", arg}.
std::pair<std::string, std::string> SplitFlag(const std::string& arg) {
  absl::string_view text = arg;
  if (!absl::ConsumePrefix(&text, "--")) return {"", arg};
  const std::pair<std::string, std::string> parts = absl::StrSplit(text, absl::MaxSplits('=', 1));
  return parts;
}

// The value of --`name` in `args`, "" when not given.
std::string FlagValue(const std::vector<std::string>& args, absl::string_view name) {
  for (const std::string& arg : args) {
    auto [flag, value] = SplitFlag(arg);
    if (flag == name) return value;
  }
  return "";
}

// A container with its arguments expanded as the kubelet expands them.
struct ResolvedContainer {
  const Pod* pod;
  const Value* container;
  std::string binary;  // basename of the command
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  // "pstrain-ps-0/worker (StatefulSet/pstrain-ps)": a pod may have several.
  std::string where() const {
    return absl::StrCat(pod->name, "/", StringAt(*container, "name"), " (", pod->workload, ")");
  }
};

std::vector<ResolvedContainer> ResolveContainers(const std::vector<Pod>& pods,
                                                 const std::vector<Value>& objects) {
  std::vector<ResolvedContainer> resolved;
  for (const Pod& pod : pods) {
    for (const Value* container : ListAt(*pod.spec, "containers")) {
      ResolvedContainer entry{&pod, container, "", {}, {}};
      absl::StatusOr<std::map<std::string, std::string>> env =
          ContainerEnv(*container, pod, objects);
      EXPECT_TRUE(env.ok()) << env.status();
      if (env.ok()) entry.env = *env;
      const std::vector<const Value*> command = ListAt(*container, "command");
      EXPECT_EQ(command.size(), 1u) << entry.where() << ": the command is the binary alone";
      if (!command.empty()) {
        absl::string_view path = command[0]->string_value();
        EXPECT_TRUE(absl::ConsumePrefix(&path, kBinDir))
            << entry.where() << ": " << command[0]->string_value() << " is not in " << kBinDir;
        entry.binary = std::string(path);
      }
      for (const Value* arg : ListAt(*container, "args")) {
        const std::string expanded = ExpandEnvReferences(arg->string_value(), entry.env);
        EXPECT_FALSE(absl::StrContains(expanded, "$("))
            << entry.where() << ": " << arg->string_value() << " names an undefined variable";
        entry.args.push_back(expanded);
      }
      resolved.push_back(std::move(entry));
    }
  }
  return resolved;
}

// The containerPort a probe or Service names (by name or number); 0 if none.
int ContainerPort(const Value& container, const Value& port_ref) {
  for (const Value* port : ListAt(container, "ports")) {
    if (port_ref.has_string_value() && StringAt(*port, "name") == port_ref.string_value()) {
      return static_cast<int>(NumberAt(*port, "containerPort"));
    }
    if (port_ref.kind_case() == Value::kNumberValue &&
        NumberAt(*port, "containerPort") == port_ref.number_value()) {
      return static_cast<int>(port_ref.number_value());
    }
  }
  return 0;
}

// How a Service's targetPort, a network policy's port or a monitor's port
// reads in a message: "metrics" or "9090".
std::string PortRefText(const Value& port_ref) {
  return port_ref.has_string_value() ? port_ref.string_value()
                                     : absl::StrCat(port_ref.number_value());
}

// The container of `pod` that declares the port a Service, network policy or
// monitor names (by name or number), looked up across all the pod's
// containers as Kubernetes does, and the port's number; a null container
// when none declares it.
struct PodPort {
  const ResolvedContainer* container = nullptr;
  int port = 0;
};

PodPort FindPodPort(const std::vector<ResolvedContainer>& containers, const Pod& pod,
                    const Value& port_ref) {
  for (const ResolvedContainer& c : containers) {
    if (c.pod != &pod) continue;
    if (const int port = ContainerPort(*c.container, port_ref); port > 0) return {&c, port};
  }
  return {};
}

// Kubernetes quantities as written here: "250m", "1", "2Gi", "512Mi".
double Quantity(const std::string& text) {
  struct Suffix {
    const char* suffix;
    double scale;
  };
  for (const Suffix& s :
       {Suffix{"Gi", 1 << 30}, Suffix{"Mi", 1 << 20}, Suffix{"Ki", 1 << 10}, Suffix{"m", 1e-3}}) {
    absl::string_view number = text;
    double value = 0;
    if (absl::ConsumeSuffix(&number, s.suffix) && absl::SimpleAtod(number, &value)) {
      return value * s.scale;
    }
  }
  double value = -1;
  EXPECT_TRUE(absl::SimpleAtod(text, &value)) << "quantity " << text;
  return value;
}

class RenderedManifestsTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::vector<Value>> objects = RenderManifests(GetParam());
    ASSERT_TRUE(objects.ok()) << objects.status();
    objects_ = *std::move(objects);
    pods_ = ExpandPods(objects_);
    ASSERT_FALSE(pods_.empty()) << GetParam() << " renders no pod";
    containers_ = ResolveContainers(pods_, objects_);
  }

  std::vector<const ResolvedContainer*> OfBinary(absl::string_view binary) const {
    std::vector<const ResolvedContainer*> found;
    for (const ResolvedContainer& c : containers_) {
      if (c.binary == binary) found.push_back(&c);
    }
    return found;
  }

  std::vector<Value> objects_;
  std::vector<Pod> pods_;
  std::vector<ResolvedContainer> containers_;
};

TEST_P(RenderedManifestsTest, EveryRoleRunsWithTheImagesBinaries) {
  std::map<std::string, int> count;
  for (const ResolvedContainer& c : containers_) {
    ++count[c.binary];
    EXPECT_THAT(std::vector<std::string>(std::begin(kBinaries), std::end(kBinaries)),
                Contains(c.binary))
        << c.where();
    EXPECT_FALSE(StringAt(*c.container, "image").empty()) << c.where();
  }
  EXPECT_EQ(count["pstrain-coordinator"], 1) << "exactly one coordinator";
  EXPECT_EQ(count["pstrain-evaluator"], 1) << "exactly one evaluator";
  EXPECT_GE(count["pstrain-ps"], 1);
  EXPECT_GE(count["pstrain-worker"], 1);
}

TEST_P(RenderedManifestsTest, EveryFlagIsOneTheBinaryAccepts) {
  for (const ResolvedContainer& c : containers_) {
    const std::set<std::string> accepted = AcceptedFlags(c.binary);
    for (const std::string& arg : c.args) {
      auto [flag, value] = SplitFlag(arg);
      ASSERT_FALSE(flag.empty()) << c.where() << ": '" << arg
                                 << "' is not --flag=value; daemons take no positional argument";
      EXPECT_THAT(accepted, Contains(flag))
          << c.where() << ": " << c.binary << " has no flag --" << flag;
    }
  }
}

// The port of a host:port flag, which must listen on every interface for the
// kubelet to reach it; 0 when the flag is not given.
int ListenedPort(const ResolvedContainer& c, absl::string_view flag) {
  const std::string listen = FlagValue(c.args, flag);
  if (listen.empty()) return 0;
  absl::StatusOr<HostPort> parsed = ParseHostPort(listen);
  EXPECT_TRUE(parsed.ok()) << c.where() << ": --" << flag << ": " << parsed.status();
  if (!parsed.ok()) return 0;
  EXPECT_EQ(parsed->host, "0.0.0.0")
      << c.where() << ": --" << flag << ": probes come from the node";
  return parsed->port;
}

// The kubelet's gRPC probes speak plaintext: they must reach a port that
// answers them in plaintext, the health port (--health_listen) when there is
// one, never a port that serves TLS.
TEST_P(RenderedManifestsTest, EveryContainerHasGrpcProbesOnAPlaintextHealthPort) {
  for (const ResolvedContainer& c : containers_) {
    // The port the daemon serves gRPC on: --listen's, else TF_CONFIG's entry
    // for it (the TFJob's tfjob-port).
    int serving_port = ListenedPort(c, "listen");
    if (serving_port == 0) {
      ASSERT_FALSE(c.pod->replica_type.empty())
          << c.where() << ": no --listen: it would serve on loopback, out of the probes' reach";
      Value name;
      name.set_string_value("tfjob-port");
      serving_port = ContainerPort(*c.container, name);
    }
    ASSERT_GT(serving_port, 0) << c.where();
    const int health_port = ListenedPort(c, "health_listen");
    const bool serves_tls = !FlagValue(c.args, "tls_cert").empty();
    if (serves_tls) {
      ASSERT_GT(health_port, 0) << c.where() << ": serves TLS and has no plaintext health port";
    }
    EXPECT_NE(health_port, serving_port) << c.where();
    const int probed_port = health_port > 0 ? health_port : serving_port;
    for (const char* probe : {"readinessProbe", "livenessProbe"}) {
      const Value* grpc = Find(*c.container, absl::StrCat(probe, ".grpc"));
      ASSERT_NE(grpc, nullptr) << c.where() << ": no gRPC " << probe;
      EXPECT_EQ(NumberAt(*grpc, "port"), probed_port) << c.where() << " " << probe;
      if (serves_tls) {
        EXPECT_NE(NumberAt(*grpc, "port"), serving_port)
            << c.where() << " " << probe << " targets the TLS port, which kubelet cannot probe";
      }
      EXPECT_EQ(StringAt(*grpc, "service"), "") << c.where() << ": the whole server's health";
    }
    EXPECT_GT(ContainerPort(*c.container, *Find(*c.container, "livenessProbe.grpc.port")), 0)
        << c.where() << ": the probe port is not a declared containerPort";
  }
}

// The containers of a pod share its network namespace: two servers on one
// port cannot both start. Services, network policies and monitors find a
// port by name across the pod's containers, so a name is the pod's too.
TEST_P(RenderedManifestsTest, ContainersOfAPodShareNoPort) {
  for (const Pod& pod : pods_) {
    std::map<std::string, std::string> names;  // port name -> where declared
    std::map<int, std::string> numbers;        // containerPort -> where declared
    for (const ResolvedContainer& c : containers_) {
      if (c.pod != &pod) continue;
      std::set<int> declared;
      for (const Value* port : ListAt(*c.container, "ports")) {
        const std::string name = StringAt(*port, "name");
        const int number = static_cast<int>(NumberAt(*port, "containerPort"));
        EXPECT_FALSE(name.empty()) << c.where() << ": port " << number << " has no name";
        if (auto [it, added] = names.emplace(name, c.where()); !added) {
          ADD_FAILURE() << pod.name << ": port name " << name << " is declared by " << it->second
                        << " and " << c.where();
        }
        if (auto [it, added] = numbers.emplace(number, c.where()); !added) {
          ADD_FAILURE() << pod.name << ": port " << number << " is declared by " << it->second
                        << " and " << c.where();
        }
        declared.insert(number);
      }
      // Every server a container starts listens on a port it declares, so
      // distinct declarations mean distinct sockets.
      for (const char* flag : {"listen", "health_listen", "metrics_listen"}) {
        if (const int port = ListenedPort(c, flag); port > 0) {
          EXPECT_EQ(declared.count(port), 1u) << c.where() << ": --" << flag << " listens on "
                                              << port << ", which the container does not declare";
        }
      }
    }
  }
}

TEST_P(RenderedManifestsTest, EveryContainerHasRequestsAndLimits) {
  for (const ResolvedContainer& c : containers_) {
    for (const char* resource : {"cpu", "memory"}) {
      const std::string request =
          StringAt(*c.container, absl::StrCat("resources.requests.", resource));
      const std::string limit = StringAt(*c.container, absl::StrCat("resources.limits.", resource));
      ASSERT_FALSE(request.empty()) << c.where() << ": no " << resource << " request";
      ASSERT_FALSE(limit.empty()) << c.where() << ": no " << resource << " limit";
      EXPECT_LE(Quantity(request), Quantity(limit)) << c.where() << " " << resource;
    }
  }
}

TEST_P(RenderedManifestsTest, EveryPodRunsLockedDown) {
  for (const ResolvedContainer& c : containers_) {
    const Value& pod = *c.pod->spec;
    EXPECT_EQ(StringAt(pod, "serviceAccountName"), "pstrain") << c.where();
    EXPECT_TRUE(Find(pod, "automountServiceAccountToken") != nullptr &&
                !BoolAt(pod, "automountServiceAccountToken"))
        << c.where() << ": no API token in the pod";
    EXPECT_TRUE(BoolAt(pod, "securityContext.runAsNonRoot")) << c.where();
    EXPECT_GT(NumberAt(pod, "securityContext.runAsUser"), 0) << c.where();
    EXPECT_EQ(StringAt(pod, "securityContext.seccompProfile.type"), "RuntimeDefault") << c.where();
    const Value& container = *c.container;
    EXPECT_TRUE(BoolAt(container, "securityContext.runAsNonRoot")) << c.where();
    EXPECT_TRUE(BoolAt(container, "securityContext.readOnlyRootFilesystem")) << c.where();
    const Value* escalation = Find(container, "securityContext.allowPrivilegeEscalation");
    EXPECT_TRUE(escalation != nullptr && !escalation->bool_value()) << c.where();
    const std::vector<const Value*> dropped =
        ListAt(container, "securityContext.capabilities.drop");
    EXPECT_TRUE(dropped.size() == 1 && dropped[0]->string_value() == "ALL") << c.where();
    EXPECT_TRUE(Find(container, "securityContext.privileged") == nullptr ||
                !BoolAt(container, "securityContext.privileged"))
        << c.where();
    // With a read-only root, /tmp must be a volume.
    bool tmp_mounted = false;
    for (const Value* mount : ListAt(container, "volumeMounts")) {
      tmp_mounted = tmp_mounted || StringAt(*mount, "mountPath") == "/tmp";
    }
    EXPECT_TRUE(tmp_mounted) << c.where() << ": no writable /tmp";
  }
}

TEST_P(RenderedManifestsTest, TerminationGraceOutlastsTheShutdownGrace) {
  for (const ResolvedContainer& c : containers_) {
    double shutdown_grace = 10;  // the daemons' default --shutdown_grace_secs
    if (std::string value = FlagValue(c.args, "shutdown_grace_secs"); !value.empty()) {
      ASSERT_TRUE(absl::SimpleAtod(value, &shutdown_grace)) << c.where();
    }
    const double termination = NumberAt(*c.pod->spec, "terminationGracePeriodSeconds");
    // Room for the work done before the server drains (handing back the
    // running job, closing files).
    EXPECT_GE(termination, shutdown_grace + 20) << c.where();
    if (c.binary == "pstrain-coordinator" || c.binary == "pstrain-ps") {
      // Both take part in writing a checkpoint.
      EXPECT_GE(shutdown_grace, 60) << c.where() << ": a final checkpoint needs time";
    }
  }
}

TEST_P(RenderedManifestsTest, VolumesAreDeclaredAndRendered) {
  for (const ResolvedContainer& c : containers_) {
    std::map<std::string, const Value*> volumes;
    for (const Value* volume : ListAt(*c.pod->spec, "volumes")) {
      volumes[StringAt(*volume, "name")] = volume;
    }
    for (const Value* mount : ListAt(*c.container, "volumeMounts")) {
      const std::string name = StringAt(*mount, "name");
      ASSERT_EQ(volumes.count(name), 1u) << c.where() << ": mounts undeclared volume " << name;
      const Value& volume = *volumes[name];
      if (const Value* claim = Find(volume, "persistentVolumeClaim")) {
        const Value* pvc =
            FindObject(objects_, "PersistentVolumeClaim", StringAt(*claim, "claimName"));
        ASSERT_NE(pvc, nullptr) << c.where() << ": claim " << StringAt(*claim, "claimName");
      } else if (const Value* map = Find(volume, "configMap")) {
        EXPECT_NE(FindObject(objects_, "ConfigMap", StringAt(*map, "name")), nullptr)
            << c.where() << ": ConfigMap " << StringAt(*map, "name");
      } else if (const Value* secret = Find(volume, "secret")) {
        // Secrets hold keys and are created by the operator of the
        // cluster, never rendered; the README must say how.
        EXPECT_THAT(ReadFile(k8s_testing::RunfilesPath("deploy/README.md")),
                    HasSubstr(StringAt(*secret, "secretName")))
            << c.where() << ": deploy/README.md does not tell how to create the Secret";
      } else {
        EXPECT_NE(Find(volume, "emptyDir"), nullptr) << c.where() << ": volume " << name;
      }
    }
  }
  // The model_dir volume is shared by every pod that writes checkpoints or
  // exports; the coordinator's --checkpoint_root is on it.
  for (const ResolvedContainer* c : OfBinary("pstrain-coordinator")) {
    EXPECT_EQ(FlagValue(c->args, "checkpoint_root"), "/var/lib/pstrain") << c->where();
  }
  for (const ResolvedContainer* c : OfBinary("pstrain-ps")) {
    EXPECT_EQ(FlagValue(c->args, "checkpoint_root"), "/var/lib/pstrain") << c->where();
  }
}

TEST_P(RenderedManifestsTest, ClusterShapeAgreesEverywhere) {
  const int num_ps = static_cast<int>(OfBinary("pstrain-ps").size());
  const int num_workers = static_cast<int>(OfBinary("pstrain-worker").size());
  for (const ResolvedContainer* c : OfBinary("pstrain-coordinator")) {
    // The TFJob's coordinator counts TF_CONFIG's lists, which the operator
    // writes from the same replica counts.
    if (!c->pod->replica_type.empty()) continue;
    EXPECT_EQ(FlagValue(c->args, "num_ps"), absl::StrCat(num_ps)) << c->where();
    EXPECT_EQ(FlagValue(c->args, "num_workers"), absl::StrCat(num_workers)) << c->where();
  }
  std::set<int> ps_indexes;
  for (const ResolvedContainer* c : OfBinary("pstrain-ps")) {
    if (!c->pod->replica_type.empty()) continue;
    const std::vector<std::string> addresses =
        absl::StrSplit(FlagValue(c->args, "ps_addresses"), ',');
    ASSERT_EQ(static_cast<int>(addresses.size()), num_ps) << c->where() << ": --ps_addresses";
    int index = -1;
    ASSERT_TRUE(absl::SimpleAtoi(FlagValue(c->args, "task_index"), &index)) << c->where();
    ps_indexes.insert(index);
    // The shard registers under its own entry: the DNS name of its pod.
    EXPECT_EQ(addresses[index], absl::StrCat(c->pod->name, ".", c->pod->subdomain, ":7070"))
        << c->where();
  }
  if (!ps_indexes.empty()) {
    EXPECT_EQ(static_cast<int>(ps_indexes.size()), num_ps);
  }
  std::set<std::string> worker_indexes;
  for (const ResolvedContainer* c : OfBinary("pstrain-worker")) {
    if (c->pod->replica_type.empty()) worker_indexes.insert(FlagValue(c->args, "task_index"));
  }
  if (!worker_indexes.empty()) {
    EXPECT_EQ(static_cast<int>(worker_indexes.size()), num_workers) << "each worker its index";
  }
}

// Every address a daemon dials names a rendered Service and one of its
// ports, and that port leads to the pod of the role it is meant for.
TEST_P(RenderedManifestsTest, DialledAddressesNameServicesAndTheirPorts) {
  for (const ResolvedContainer& c : containers_) {
    std::vector<std::pair<std::string, std::string>> dialled;  // address, binary behind it
    if (std::string a = FlagValue(c.args, "coordinator_address"); !a.empty()) {
      dialled.push_back({a, "pstrain-coordinator"});
    }
    if (std::string list = FlagValue(c.args, "ps_addresses"); !list.empty()) {
      for (absl::string_view a : absl::StrSplit(list, ','))
        dialled.push_back({std::string(a), "pstrain-ps"});
    }
    for (const auto& [address, role] : dialled) {
      absl::StatusOr<HostPort> parsed = ParseHostPort(address);
      ASSERT_TRUE(parsed.ok()) << c.where() << ": " << parsed.status();
      const std::vector<std::string> labels = absl::StrSplit(parsed->host, '.');
      // "service" or "pod.service" (a StatefulSet pod's name).
      const std::string service_name = labels.size() >= 2 ? labels[1] : labels[0];
      const Value* service = FindObject(objects_, "Service", service_name);
      ASSERT_NE(service, nullptr) << c.where() << ": " << address << " names no Service";
      const Value* port = nullptr;
      for (const Value* p : ListAt(*service, "spec.ports")) {
        if (NumberAt(*p, "port") == parsed->port) port = p;
      }
      ASSERT_NE(port, nullptr) << c.where() << ": Service " << service_name << " has no port "
                               << parsed->port;
      bool reached = false;
      for (const Pod& pod : pods_) {
        if (!SelectorMatches(*Find(*service, "spec.selector"), pod.labels)) continue;
        if (labels.size() >= 2 && pod.name != labels[0]) continue;
        // The address reaches whichever container of the pod declares the
        // targetPort; a pod may run other roles beside it.
        const Value& target_port = *Find(*port, "targetPort");
        const PodPort target = FindPodPort(containers_, pod, target_port);
        ASSERT_NE(target.container, nullptr) << address << ": no container of " << pod.name
                                             << " declares targetPort " << PortRefText(target_port);
        EXPECT_EQ(target.container->binary, role)
            << address << " leads to " << target.container->where();
        EXPECT_EQ(target.port, parsed->port) << address << ": targetPort is not the port "
                                             << target.container->where() << " declares";
        EXPECT_EQ(FlagValue(target.container->args, "listen"),
                  absl::StrCat("0.0.0.0:", target.port))
            << target.container->where() << " does not listen where " << address << " leads";
        reached = true;
      }
      EXPECT_TRUE(reached) << c.where() << ": " << address << " selects no pod";
    }
  }
}

TEST_P(RenderedManifestsTest, ServicesSelectPodsAndTheirPorts) {
  for (const Value* service : ObjectsOfKind(objects_, "Service")) {
    const std::string name = StringAt(*service, "metadata.name");
    int selected = 0;
    for (const Pod& pod : pods_) {
      if (!SelectorMatches(*Find(*service, "spec.selector"), pod.labels)) continue;
      ++selected;
      // Each port of the Service leads to one container of the pod, not
      // necessarily the same one.
      for (const Value* port : ListAt(*service, "spec.ports")) {
        EXPECT_NE(FindPodPort(containers_, pod, *Find(*port, "targetPort")).container, nullptr)
            << "Service " << name << " port " << StringAt(*port, "name")
            << " is not a port of any container of " << pod.name;
      }
    }
    EXPECT_GT(selected, 0) << "Service " << name << " selects no pod";
  }
  for (const Value* set : ObjectsOfKind(objects_, "StatefulSet")) {
    const Value* service = FindObject(objects_, "Service", StringAt(*set, "spec.serviceName"));
    ASSERT_NE(service, nullptr) << StringAt(*set, "metadata.name") << ": no governing Service";
    EXPECT_EQ(StringAt(*service, "spec.clusterIP"), "None") << "a governing Service is headless";
    EXPECT_TRUE(BoolAt(*service, "spec.publishNotReadyAddresses"))
        << "peers must resolve a shard's name before it is ready";
  }
  for (const Value* workload : ObjectsOfKind(objects_, "Deployment")) {
    EXPECT_TRUE(SelectorMatches(*Find(*workload, "spec.selector"),
                                k8s_testing::ExpandPods({*workload}).front().labels));
  }
}

// The label a dotted path cannot name ("app.kubernetes.io/part-of").
std::string Label(const Value* labels, const std::string& key) {
  if (labels == nullptr || !labels->has_struct_value()) return "";
  auto it = labels->struct_value().fields().find(key);
  return it == labels->struct_value().fields().end() ? "" : it->second.string_value();
}

std::map<std::string, std::string> Labels(const Value& object) {
  std::map<std::string, std::string> labels;
  if (const Value* l = Find(object, "metadata.labels")) {
    for (const auto& [key, value] : l->struct_value().fields()) labels[key] = value.string_value();
  }
  return labels;
}

// Disruption budgets, network policies and Prometheus monitors come with
// the plain manifests (the TFJob's pods belong to the operator).
class ClusterPoliciesTest : public testing::TestWithParam<std::string> {};

TEST_P(ClusterPoliciesTest, PoliciesAndMonitorsSelectWhatExists) {
  absl::StatusOr<std::vector<Value>> rendered = RenderManifests(GetParam());
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  const std::vector<Value>& objects = *rendered;
  const std::vector<Pod> pods = ExpandPods(objects);
  const std::vector<ResolvedContainer> containers = ResolveContainers(pods, objects);
  auto selects_some_pod = [&](const Value& selector) {
    return std::any_of(pods.begin(), pods.end(),
                       [&](const Pod& pod) { return SelectorMatches(selector, pod.labels); });
  };
  // Whether a pod the selector matches has a container that declares the
  // port `port_ref` names.
  auto selects_port = [&](const Value& selector, const Value& port_ref) {
    return std::any_of(pods.begin(), pods.end(), [&](const Pod& pod) {
      return SelectorMatches(selector, pod.labels) &&
             FindPodPort(containers, pod, port_ref).container != nullptr;
    });
  };
  auto runs = [&](const Pod& pod, absl::string_view binary) {
    return std::any_of(containers.begin(), containers.end(), [&](const ResolvedContainer& c) {
      return c.pod == &pod && c.binary == binary;
    });
  };

  // Disruption budgets: a pod that holds the running job (the coordinator, a
  // shard, whatever else runs beside them) may not be evicted; a pod of
  // workers alone may, one at a time. The eviction API refuses a pod that
  // two budgets select.
  const std::vector<const Value*> budgets = ObjectsOfKind(objects, "PodDisruptionBudget");
  ASSERT_FALSE(budgets.empty());
  for (const Value* budget : budgets) {
    EXPECT_TRUE(selects_some_pod(*Find(*budget, "spec.selector")))
        << StringAt(*budget, "metadata.name") << " selects no pod";
  }
  for (const Pod& pod : pods) {
    std::vector<const Value*> covering;
    for (const Value* budget : budgets) {
      if (SelectorMatches(*Find(*budget, "spec.selector"), pod.labels)) covering.push_back(budget);
    }
    EXPECT_LE(covering.size(), 1u) << pod.name << " is under several disruption budgets";
    if (runs(pod, "pstrain-coordinator") || runs(pod, "pstrain-ps")) {
      ASSERT_EQ(covering.size(), 1u) << pod.name << " holds the running job and has no budget";
      EXPECT_EQ(NumberAt(*covering[0], "spec.maxUnavailable"), 0) << pod.name;
    } else if (runs(pod, "pstrain-worker")) {
      ASSERT_EQ(covering.size(), 1u) << pod.name;
      EXPECT_EQ(NumberAt(*covering[0], "spec.maxUnavailable"), 1) << pod.name;
    }
  }

  // Network policies select pods that exist and open ports that a container
  // of a selected pod declares (a named port no container has opens
  // nothing).
  const std::vector<const Value*> policies = ObjectsOfKind(objects, "NetworkPolicy");
  ASSERT_FALSE(policies.empty());
  for (const Value* policy : policies) {
    const std::string name = StringAt(*policy, "metadata.name");
    const Value& selector = *Find(*policy, "spec.podSelector");
    EXPECT_TRUE(selects_some_pod(selector)) << name;
    for (const Value* rule : ListAt(*policy, "spec.ingress")) {
      for (const Value* port : ListAt(*rule, "ports")) {
        const Value& port_ref = *Find(*port, "port");
        EXPECT_TRUE(selects_port(selector, port_ref))
            << name << ": port " << PortRefText(port_ref) << " is no port of a pod it selects";
      }
    }
  }
  // The internal API: only pods of this cluster, from this namespace.
  const Value* internal = FindObject(objects, "NetworkPolicy", "pstrain-internal");
  ASSERT_NE(internal, nullptr);
  const std::vector<const Value*> rules = ListAt(*internal, "spec.ingress");
  ASSERT_EQ(rules.size(), 1u);
  const std::vector<const Value*> from = ListAt(*rules[0], "from");
  ASSERT_EQ(from.size(), 1u);
  EXPECT_EQ(Label(Find(*from[0], "podSelector.matchLabels"), "app.kubernetes.io/part-of"),
            "pstrain");
  EXPECT_EQ(Find(*from[0], "namespaceSelector"), nullptr);
  // Whether a policy lets peers that `peer` accepts (a rule's "from" entry)
  // reach `port` of container `c`.
  auto opens = [&](const ResolvedContainer& c, int port, const auto& peer) {
    for (const Value* policy : policies) {
      if (!SelectorMatches(*Find(*policy, "spec.podSelector"), c.pod->labels)) continue;
      for (const Value* rule : ListAt(*policy, "spec.ingress")) {
        const std::vector<const Value*> peers = ListAt(*rule, "from");
        if (!std::any_of(peers.begin(), peers.end(), [&](const Value* p) { return peer(*p); })) {
          continue;
        }
        for (const Value* p : ListAt(*rule, "ports")) {
          const PodPort target = FindPodPort(containers, *c.pod, *Find(*p, "port"));
          if (target.container == &c && target.port == port) return true;
        }
      }
    }
    return false;
  };
  auto cluster_member = [](const Value& peer) {
    return Find(peer, "namespaceSelector") == nullptr &&
           Label(Find(peer, "podSelector.matchLabels"), "app.kubernetes.io/part-of") == "pstrain";
  };
  auto prometheus = [](const Value& peer) {
    return Label(Find(peer, "namespaceSelector.matchLabels"), "kubernetes.io/metadata.name") ==
           "monitoring";
  };

  // Every container is scraped exactly once, by a ServiceMonitor through a
  // Service or by a PodMonitor, on the port --metrics_listen serves, which
  // the network policies open to Prometheus; its gRPC port is open to the
  // cluster's members.
  for (const ResolvedContainer& c : containers) {
    absl::StatusOr<HostPort> metrics = ParseHostPort(FlagValue(c.args, "metrics_listen"));
    ASSERT_TRUE(metrics.ok()) << c.where() << ": --metrics_listen";
    EXPECT_EQ(metrics->host, "0.0.0.0") << c.where();
    auto is_metrics = [&](const PodPort& target) {
      return target.container == &c && target.port == metrics->port;
    };
    int scraped = 0;
    for (const Value* monitor : ObjectsOfKind(objects, "PodMonitor")) {
      if (!SelectorMatches(*Find(*monitor, "spec.selector"), c.pod->labels)) continue;
      for (const Value* endpoint : ListAt(*monitor, "spec.podMetricsEndpoints")) {
        if (is_metrics(FindPodPort(containers, *c.pod, *Find(*endpoint, "port")))) ++scraped;
      }
    }
    for (const Value* monitor : ObjectsOfKind(objects, "ServiceMonitor")) {
      for (const Value* service : ObjectsOfKind(objects, "Service")) {
        if (!SelectorMatches(*Find(*monitor, "spec.selector"), Labels(*service)) ||
            !SelectorMatches(*Find(*service, "spec.selector"), c.pod->labels)) {
          continue;
        }
        for (const Value* endpoint : ListAt(*monitor, "spec.endpoints")) {
          for (const Value* port : ListAt(*service, "spec.ports")) {
            if (StringAt(*port, "name") == StringAt(*endpoint, "port") &&
                is_metrics(FindPodPort(containers, *c.pod, *Find(*port, "targetPort")))) {
              ++scraped;
            }
          }
        }
      }
    }
    EXPECT_EQ(scraped, 1) << c.where() << " is scraped " << scraped << " times";
    EXPECT_TRUE(opens(c, metrics->port, prometheus))
        << c.where() << ": no network policy lets Prometheus reach port " << metrics->port;
    if (const int grpc = ListenedPort(c, "listen"); grpc > 0) {
      EXPECT_TRUE(opens(c, grpc, cluster_member))
          << c.where() << ": no network policy lets the cluster's pods reach port " << grpc;
    }
  }
  // And every monitor's endpoint scrapes something: a port of a pod (or of
  // a Service) it selects.
  for (const Value* monitor : ObjectsOfKind(objects, "PodMonitor")) {
    for (const Value* endpoint : ListAt(*monitor, "spec.podMetricsEndpoints")) {
      EXPECT_TRUE(selects_port(*Find(*monitor, "spec.selector"), *Find(*endpoint, "port")))
          << "PodMonitor " << StringAt(*monitor, "metadata.name") << " port "
          << StringAt(*endpoint, "port") << " is no port of a pod it selects";
    }
  }
  for (const Value* monitor : ObjectsOfKind(objects, "ServiceMonitor")) {
    for (const Value* endpoint : ListAt(*monitor, "spec.endpoints")) {
      bool found = false;
      for (const Value* service : ObjectsOfKind(objects, "Service")) {
        if (!SelectorMatches(*Find(*monitor, "spec.selector"), Labels(*service))) continue;
        for (const Value* port : ListAt(*service, "spec.ports")) {
          found = found || StringAt(*port, "name") == StringAt(*endpoint, "port");
        }
      }
      EXPECT_TRUE(found) << "ServiceMonitor " << StringAt(*monitor, "metadata.name") << " port "
                         << StringAt(*endpoint, "port") << " is no port of a Service it selects";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Overlays, ClusterPoliciesTest,
                         testing::Values("overlays/dev", "overlays/prod", "overlays/colocated"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param.substr(info.param.find('/') + 1);
                         });

TEST_P(RenderedManifestsTest, ExampleJobSpecsAreValid) {
  const Value* jobs = FindObject(objects_, "ConfigMap", "pstrain-jobs");
  ASSERT_NE(jobs, nullptr);
  const Value* data = Find(*jobs, "data");
  ASSERT_NE(data, nullptr);
  ASSERT_GE(data->struct_value().fields().size(), 2u);
  for (const auto& [file, text] : data->struct_value().fields()) {
    ASSERT_TRUE(absl::EndsWith(file, ".pbtxt")) << file;
    absl::StatusOr<JobSpec> spec = ParseJobSpecText(text.string_value(), file);
    ASSERT_TRUE(spec.ok()) << file << ": " << spec.status();
    absl::StatusOr<JobSpec> prepared = PrepareJobSpec(*spec);
    EXPECT_TRUE(prepared.ok()) << file << ": " << prepared.status();
    // Under --checkpoint_root, i.e. on the model_dir volume.
    const std::string& dir = spec->checkpoint().model_dir();
    EXPECT_TRUE(!absl::StartsWith(dir, "/") || absl::StartsWith(dir, "/var/lib/pstrain/"))
        << file << ": model_dir " << dir;
  }
}

INSTANTIATE_TEST_SUITE_P(Renderings, RenderedManifestsTest,
                         testing::Values("overlays/dev", "overlays/prod", "overlays/colocated",
                                         "tfjob"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

// What differs between the overlays is what each is for.
TEST(OverlaysTest, DevIsSmallAndProdIsSpread) {
  absl::StatusOr<std::vector<Value>> dev = RenderManifests("overlays/dev");
  absl::StatusOr<std::vector<Value>> prod = RenderManifests("overlays/prod");
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_TRUE(prod.ok()) << prod.status();
  EXPECT_EQ(NumberAt(*FindObject(*dev, "StatefulSet", "pstrain-ps"), "spec.replicas"), 1);
  EXPECT_EQ(NumberAt(*FindObject(*dev, "StatefulSet", "pstrain-worker"), "spec.replicas"), 1);
  const Value* prod_ps = FindObject(*prod, "StatefulSet", "pstrain-ps");
  ASSERT_NE(prod_ps, nullptr);
  EXPECT_GT(NumberAt(*prod_ps, "spec.replicas"), 2);
  EXPECT_GT(NumberAt(*FindObject(*prod, "StatefulSet", "pstrain-worker"), "spec.replicas"), 2);
  const std::vector<const Value*> anti = ListAt(
      *prod_ps,
      "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  ASSERT_EQ(anti.size(), 1u) << "one parameter server per node";
  EXPECT_EQ(StringAt(*anti[0], "topologyKey"), "kubernetes.io/hostname");
  for (const std::vector<Value>* objects : {&*dev, &*prod}) {
    const Value* claim = FindObject(*objects, "PersistentVolumeClaim", "pstrain-model-dir");
    ASSERT_NE(claim, nullptr);
    EXPECT_FALSE(ListAt(*claim, "spec.accessModes").empty());
  }
  EXPECT_EQ(ListAt(*FindObject(*prod, "PersistentVolumeClaim", "pstrain-model-dir"),
                   "spec.accessModes")[0]
                ->string_value(),
            "ReadWriteMany")
      << "pods on several nodes share model_dir";
}

// The argument --`name`=... of a container as written, before the kubelet
// expands it ("$(POD_INDEX)"); "" when not given.
std::string WrittenFlag(const Value& container, absl::string_view name) {
  for (const Value* arg : ListAt(container, "args")) {
    auto [flag, value] = SplitFlag(arg->string_value());
    if (flag == name) return value;
  }
  return "";
}

// The entry of the container's env named `name`, nullptr if none.
const Value* EnvEntry(const Value& container, absl::string_view name) {
  for (const Value* entry : ListAt(container, "env")) {
    if (StringAt(*entry, "name") == name) return entry;
  }
  return nullptr;
}

// The colocated overlay's purpose: worker i beside shard i in one pod, so
// that each worker reaches one shard through a shared-memory lane (same
// network namespace, same kernel) and the others over gRPC.
TEST(OverlaysTest, ColocatedPodsPairEachShardWithOneWorker) {
  absl::StatusOr<std::vector<Value>> colocated = RenderManifests("overlays/colocated");
  ASSERT_TRUE(colocated.ok()) << colocated.status();
  const std::vector<Pod> pods = ExpandPods(*colocated);
  const std::vector<ResolvedContainer> containers = ResolveContainers(pods, *colocated);
  for (const char* kind : {"StatefulSet", "Deployment"}) {
    EXPECT_EQ(FindObject(*colocated, kind, "pstrain-worker"), nullptr)
        << "a " << kind << " of workers alone is left";
  }
  const Value* shards = FindObject(*colocated, "StatefulSet", "pstrain-ps");
  ASSERT_NE(shards, nullptr);

  // The base's worker, which the co-located one must stay in step with
  // (a flag added there and forgotten here would be lost).
  absl::StatusOr<std::vector<Value>> base = RenderManifests("base");
  ASSERT_TRUE(base.ok()) << base.status();
  const Value* base_workers = FindObject(*base, "StatefulSet", "pstrain-worker");
  ASSERT_NE(base_workers, nullptr);
  const std::vector<const Value*> base_containers =
      ListAt(*base_workers, "spec.template.spec.containers");
  ASSERT_EQ(base_containers.size(), 1u);
  const Value& base_worker = *base_containers[0];
  const std::set<std::string> port_flags = {"listen", "health_listen", "metrics_listen"};
  using google::protobuf::util::MessageDifferencer;

  int paired = 0;
  for (const Pod& pod : pods) {
    std::map<std::string, std::vector<const ResolvedContainer*>> by_binary;
    for (const ResolvedContainer& c : containers) {
      if (c.pod == &pod) by_binary[c.binary].push_back(&c);
    }
    if (by_binary.count("pstrain-ps") == 0 && by_binary.count("pstrain-worker") == 0) continue;
    ++paired;
    EXPECT_EQ(pod.workload, "StatefulSet/pstrain-ps") << pod.name;
    ASSERT_EQ(by_binary["pstrain-ps"].size(), 1u) << pod.name << ": one shard per pod";
    ASSERT_EQ(by_binary["pstrain-worker"].size(), 1u) << pod.name << ": one worker per shard";
    EXPECT_EQ(by_binary.size(), 2u) << pod.name << ": the shard and its worker, nothing else";
    const ResolvedContainer& ps = *by_binary["pstrain-ps"][0];
    const ResolvedContainer& worker = *by_binary["pstrain-worker"][0];

    // One index for both, from one source: a variable each takes from the
    // same field of the pod, its ordinal.
    const Value* sources[2] = {nullptr, nullptr};
    for (const ResolvedContainer* c : {&ps, &worker}) {
      const std::string written = WrittenFlag(*c->container, "task_index");
      absl::string_view variable = written;
      ASSERT_TRUE(absl::ConsumePrefix(&variable, "$(") && absl::ConsumeSuffix(&variable, ")"))
          << c->where() << ": --task_index=" << written << " is not the pod's ordinal";
      const Value* entry = EnvEntry(*c->container, variable);
      ASSERT_NE(entry, nullptr) << c->where() << ": no variable " << variable;
      EXPECT_EQ(StringAt(*entry, "valueFrom.fieldRef.fieldPath"),
                "metadata.labels['apps.kubernetes.io/pod-index']")
          << c->where();
      sources[c == &ps ? 0 : 1] = Find(*entry, "valueFrom");
    }
    ASSERT_TRUE(sources[0] != nullptr && sources[1] != nullptr) << pod.name;
    EXPECT_TRUE(MessageDifferencer::Equals(*sources[0], *sources[1]))
        << pod.name << ": " << sources[0]->ShortDebugString() << " against "
        << sources[1]->ShortDebugString();
    EXPECT_EQ(FlagValue(ps.args, "task_index"), absl::StrCat(pod.index)) << ps.where();
    EXPECT_EQ(FlagValue(worker.args, "task_index"), absl::StrCat(pod.index)) << worker.where();

    // Lanes on at both ends (gflags also reads --noshm, and false as
    // f, no, n or 0).
    for (const ResolvedContainer* c : {&ps, &worker}) {
      for (const std::string& arg : c->args) {
        auto [flag, value] = SplitFlag(arg);
        EXPECT_NE(flag, "noshm") << c->where() << ": lanes are off";
        if (flag == "shm") {
          EXPECT_THAT(std::vector<std::string>({"false", "f", "no", "n", "0"}),
                      Not(Contains(absl::AsciiStrToLower(value))))
              << c->where() << ": lanes are off";
        }
      }
    }

    // The pod's network namespace is theirs to share: no port, by number
    // or name, declared or listened on, in common.
    std::set<std::string> ps_names;
    std::set<int> ps_ports;
    for (const Value* port : ListAt(*ps.container, "ports")) {
      ps_names.insert(StringAt(*port, "name"));
      ps_ports.insert(static_cast<int>(NumberAt(*port, "containerPort")));
    }
    for (const std::string& flag : port_flags) ps_ports.insert(ListenedPort(ps, flag));
    ASSERT_GE(ps_ports.size(), 3u) << ps.where();
    for (const Value* port : ListAt(*worker.container, "ports")) {
      EXPECT_EQ(ps_names.count(StringAt(*port, "name")), 0u)
          << worker.where() << ": port name " << StringAt(*port, "name") << " is the shard's";
      EXPECT_EQ(ps_ports.count(static_cast<int>(NumberAt(*port, "containerPort"))), 0u)
          << worker.where() << ": port " << NumberAt(*port, "containerPort") << " is the shard's";
    }
    for (const std::string& flag : port_flags) {
      const int port = ListenedPort(worker, flag);
      EXPECT_GT(port, 0) << worker.where() << ": --" << flag;
      EXPECT_EQ(ps_ports.count(port), 0u)
          << worker.where() << ": --" << flag << " listens on the shard's port " << port;
    }

    // The base's worker but for its ports: command, every other flag,
    // environment, securityContext and mounts.
    EXPECT_TRUE(MessageDifferencer::Equals(*Find(*worker.container, "command"),
                                           *Find(base_worker, "command")))
        << worker.where();
    const std::vector<const Value*> args = ListAt(*worker.container, "args");
    const std::vector<const Value*> base_args = ListAt(base_worker, "args");
    ASSERT_EQ(args.size(), base_args.size())
        << worker.where() << ": flags differ from base/worker.yaml's";
    for (size_t i = 0; i < args.size(); ++i) {
      auto [flag, value] = SplitFlag(args[i]->string_value());
      auto [base_flag, base_value] = SplitFlag(base_args[i]->string_value());
      EXPECT_EQ(flag, base_flag) << worker.where() << ": flag " << i;
      if (port_flags.count(flag) == 0) {
        EXPECT_EQ(value, base_value) << worker.where() << ": --" << flag;
      }
    }
    EXPECT_TRUE(
        MessageDifferencer::Equals(*Find(*worker.container, "env"), *Find(base_worker, "env")))
        << worker.where() << ": environment differs from base/worker.yaml's";
    EXPECT_TRUE(MessageDifferencer::Equals(*Find(*worker.container, "securityContext"),
                                           *Find(base_worker, "securityContext")))
        << worker.where();
    std::map<std::string, bool> mounts;  // path -> read-only
    for (const Value* mount : ListAt(*worker.container, "volumeMounts")) {
      mounts[StringAt(*mount, "mountPath")] = BoolAt(*mount, "readOnly");
    }
    std::map<std::string, bool> base_mounts;
    for (const Value* mount : ListAt(base_worker, "volumeMounts")) {
      base_mounts[StringAt(*mount, "mountPath")] = BoolAt(*mount, "readOnly");
    }
    EXPECT_EQ(mounts, base_mounts) << worker.where();
  }
  EXPECT_GT(paired, 0);
  EXPECT_EQ(paired, NumberAt(*shards, "spec.replicas"));

  // As many workers as shards, wherever the cluster's shape is written.
  const Value* shape = nullptr;
  for (const Value* map : ObjectsOfKind(*colocated, "ConfigMap")) {
    if (absl::StartsWith(StringAt(*map, "metadata.name"), "pstrain-cluster")) shape = map;
  }
  ASSERT_NE(shape, nullptr) << "no pstrain-cluster ConfigMap";
  EXPECT_EQ(StringAt(*shape, "data.num_ps"), absl::StrCat(paired));
  EXPECT_EQ(StringAt(*shape, "data.num_workers"), StringAt(*shape, "data.num_ps"));
  for (const ResolvedContainer& c : containers) {
    if (c.binary != "pstrain-coordinator") continue;
    EXPECT_EQ(FlagValue(c.args, "num_workers"), FlagValue(c.args, "num_ps")) << c.where();
  }

  const std::string readme = ReadFile(k8s_testing::RunfilesPath("deploy/README.md"));
  EXPECT_TRUE(absl::StrContains(readme, "kubectl apply -k deploy/k8s/overlays/colocated"))
      << "deploy/README.md does not tell how to deploy the colocated overlay";
}

// The Secret key behind the file `path` of a container: `path` must lie in
// a read-only mount of a Secret volume that lists the key among its items
// (so the file is there whatever else the Secret holds). "" with a test
// failure otherwise.
std::string SecretKeyOfFile(const ResolvedContainer& c, const std::string& path) {
  for (const Value* mount : ListAt(*c.container, "volumeMounts")) {
    absl::string_view file = path;
    if (!absl::ConsumePrefix(&file, StringAt(*mount, "mountPath") + "/")) continue;
    EXPECT_TRUE(BoolAt(*mount, "readOnly")) << c.where() << ": " << path << " is writable";
    for (const Value* volume : ListAt(*c.pod->spec, "volumes")) {
      if (StringAt(*volume, "name") != StringAt(*mount, "name")) continue;
      const Value* secret = Find(*volume, "secret");
      EXPECT_NE(secret, nullptr) << c.where() << ": " << path << " is not from a Secret";
      if (secret == nullptr) return "";
      for (const Value* item : ListAt(*secret, "items")) {
        if (StringAt(*item, "path") == file) return StringAt(*item, "key");
      }
      ADD_FAILURE() << c.where() << ": Secret " << StringAt(*secret, "secretName") << " mounted at "
                    << StringAt(*mount, "mountPath") << " lists no item " << file;
      return "";
    }
  }
  ADD_FAILURE() << c.where() << ": " << path << " is in no mounted volume";
  return "";
}

// Production runs every gRPC channel under mutual TLS with both tokens,
// every file from a mounted Secret whose keys deploy/README.md tells how to
// create; the probes use the plaintext health port (checked for every
// rendering above).
TEST(OverlaysTest, ProdRunsEveryChannelUnderMutualTlsWithBothTokens) {
  absl::StatusOr<std::vector<Value>> prod = RenderManifests("overlays/prod");
  ASSERT_TRUE(prod.ok()) << prod.status();
  const std::vector<Pod> pods = ExpandPods(*prod);
  const std::vector<ResolvedContainer> containers = ResolveContainers(pods, *prod);
  ASSERT_FALSE(containers.empty());
  const std::string readme = ReadFile(k8s_testing::RunfilesPath("deploy/README.md"));
  for (const ResolvedContainer& c : containers) {
    EXPECT_EQ(FlagValue(c.args, "tls_client_auth"), "require") << c.where();
    for (const char* flag :
         {"tls_cert", "tls_key", "tls_ca", "client_token_file", "cluster_token_file"}) {
      const std::string path = FlagValue(c.args, flag);
      ASSERT_FALSE(path.empty()) << c.where() << ": no --" << flag;
      const std::string key = SecretKeyOfFile(c, path);
      EXPECT_THAT(readme, HasSubstr(key))
          << c.where() << ": deploy/README.md does not say what goes in the Secret key " << key;
    }
    EXPECT_NE(FlagValue(c.args, "tls_cert"), FlagValue(c.args, "tls_ca")) << c.where();
    EXPECT_NE(FlagValue(c.args, "client_token_file"), FlagValue(c.args, "cluster_token_file"))
        << c.where() << ": one token for clients and members would let any client act as one";
  }
}

TEST(TfJobTest, ReplicasAreTheFourRolesAsTheOperatorExpectsThem) {
  absl::StatusOr<std::vector<Value>> objects = RenderManifests("tfjob");
  ASSERT_TRUE(objects.ok()) << objects.status();
  const std::vector<const Value*> jobs = ObjectsOfKind(*objects, "TFJob");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(StringAt(*jobs[0], "apiVersion"), "kubeflow.org/v1");
  const std::map<std::string, std::string> roles = {{"Chief", "pstrain-coordinator"},
                                                    {"PS", "pstrain-ps"},
                                                    {"Worker", "pstrain-worker"},
                                                    {"Evaluator", "pstrain-evaluator"}};
  const Value* specs = Find(*jobs[0], "spec.tfReplicaSpecs");
  ASSERT_NE(specs, nullptr);
  ASSERT_EQ(specs->struct_value().fields().size(), roles.size());
  for (const auto& [type, binary] : roles) {
    const Value* spec = Find(*specs, type);
    ASSERT_NE(spec, nullptr) << "no " << type << " replicas";
    const std::vector<const Value*> containers = ListAt(*spec, "template.spec.containers");
    ASSERT_EQ(containers.size(), 1u) << type;
    // The operator injects TF_CONFIG into the container named "tensorflow"
    // and takes the port named "tfjob-port" for the cluster's addresses.
    EXPECT_EQ(StringAt(*containers[0], "name"), "tensorflow") << type;
    EXPECT_EQ(ListAt(*containers[0], "command")[0]->string_value(), kBinDir + binary) << type;
    Value port_name;
    port_name.set_string_value("tfjob-port");
    EXPECT_GT(ContainerPort(*containers[0], port_name), 0) << type;
    EXPECT_EQ(Find(*containers[0], "env"), nullptr)
        << type << ": the cluster comes from TF_CONFIG alone";
  }
  EXPECT_EQ(NumberAt(*Find(*specs, "Chief"), "replicas"), 1);
}

// The runtime stage of the image installs, by name, the Debian package of
// every shared library the built binaries load.
TEST(ImageTest, RuntimeStageInstallsEveryLibraryTheBinariesLoad) {
  const std::string dockerfile = ReadFile(k8s_testing::RunfilesPath("deploy/docker/Dockerfile"));
  ASSERT_FALSE(dockerfile.empty());
  const size_t begin = dockerfile.find("# runtime-packages-begin");
  const size_t end = dockerfile.find("# runtime-packages-end");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  ASSERT_LT(dockerfile.find("AS runtime"), begin) << "the list belongs to the runtime stage";
  std::set<std::string> installed;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(dockerfile).substr(begin, end - begin), '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumeSuffix(&line, " \\") || absl::StrContains(line, ' ')) continue;
    installed.insert(std::string(line));
  }
  ASSERT_GE(installed.size(), 10u)
      << "packages read from the Dockerfile: " << absl::StrJoin(installed, " ");

  std::set<std::string> libraries;
  for (const char* binary : kBinaries) {
    EXPECT_THAT(dockerfile, HasSubstr(absl::StrCat("/", binary, " ")))
        << "the image does not copy " << binary;
    absl::StatusOr<std::string> path = LocateBinary(binary, "");
    ASSERT_TRUE(path.ok()) << path.status();
    absl::StatusOr<std::string> ldd = RunShell("ldd " + *path);
    ASSERT_TRUE(ldd.ok()) << ldd.status();
    EXPECT_THAT(*ldd, testing::Not(HasSubstr("not found"))) << binary;
    for (absl::string_view line : absl::StrSplit(*ldd, '\n')) {
      // "\tlibgrpc++.so.1.51 => /lib/x86_64-linux-gnu/libgrpc++.so.1.51 (0x...)"
      const size_t arrow = line.find("=> /");
      if (arrow == absl::string_view::npos) continue;
      libraries.insert(std::string(line.substr(arrow + 3, line.find(" (", arrow) - arrow - 3)));
    }
  }
  ASSERT_GE(libraries.size(), 10u);
  // The owning package of each, one dpkg run per spelling of the path
  // (/usr-merge: /lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu).
  // Prints "package: path" per library, or "NONE: path".
  absl::StatusOr<std::string> owners = RunShell(absl::StrCat(
      "for p in ", absl::StrJoin(libraries, " "),
      "; do "
      "o=$(dpkg -S \"$p\" 2>/dev/null || dpkg -S \"$(readlink -f \"$p\")\" 2>/dev/null || "
      "dpkg -S \"/usr$p\" 2>/dev/null || dpkg -S \"${p#/usr}\" 2>/dev/null) || o=\"NONE: $p\"; "
      "echo \"$o\" | head -n 1; done"));
  ASSERT_TRUE(owners.ok()) << owners.status();
  std::map<std::string, std::set<std::string>> needed;  // package -> libraries
  for (absl::string_view line : absl::StrSplit(*owners, '\n', absl::SkipEmpty())) {
    // "libgrpc++1.51:amd64: /usr/lib/x86_64-linux-gnu/libgrpc++.so.1.51"
    const size_t colon = line.find(':');
    ASSERT_NE(colon, absl::string_view::npos) << line;
    const std::string package(line.substr(0, colon));
    EXPECT_NE(package, "NONE") << "no Debian package owns" << line.substr(colon + 1);
    needed[package].insert(std::string(absl::StripAsciiWhitespace(line.substr(line.rfind(' ')))));
  }
  ASSERT_GE(needed.size(), 5u);
  for (const auto& [package, libraries] : needed) {
    EXPECT_THAT(installed, Contains(package))
        << "the runtime stage does not install " << package << ", which provides "
        << absl::StrJoin(libraries, ", ");
  }
}

}  // namespace
}  // namespace pstrain
