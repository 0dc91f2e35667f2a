// The Kubernetes manifests (deploy/k8s) and the image (deploy/docker) as a
// reviewer would check them, on every rendering a user can deploy: the dev
// and prod overlays and the TFJob. Rendered with the kubectl on PATH; no
// cluster and no container engine are needed.
//
// What must hold: every container has gRPC probes on a port that answers
// them in plaintext (its health port, never a TLS port), requests and
// limits, a non-root read-only securityContext, a termination grace longer
// than its own shutdown grace; every flag it is given is one its binary
// accepts (from the binary's own --helpfull); names, ports, selectors and
// Services agree; the cluster's shape (ps and worker counts) is the same
// everywhere it is written; the prod overlay runs every channel under
// mutual TLS with both tokens, from mounted Secrets; the example job specs
// are valid; and the image installs a package for every shared library the
// binaries load.

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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
  std::string where() const { return absl::StrCat(pod->name, " (", pod->workload, ")"); }
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
  EXPECT_EQ(parsed->host, "0.0.0.0") << c.where() << ": --" << flag << ": probes come from the node";
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
      for (const ResolvedContainer& target : containers_) {
        if (!SelectorMatches(*Find(*service, "spec.selector"), target.pod->labels)) continue;
        if (labels.size() >= 2 && target.pod->name != labels[0]) continue;
        EXPECT_EQ(target.binary, role) << address << " leads to " << target.where();
        const int container_port = ContainerPort(*target.container, *Find(*port, "targetPort"));
        EXPECT_EQ(container_port, parsed->port)
            << address << ": targetPort is not the port " << target.where() << " declares";
        EXPECT_EQ(FlagValue(target.args, "listen"), absl::StrCat("0.0.0.0:", container_port))
            << target.where() << " does not listen where " << address << " leads";
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
    for (const ResolvedContainer& c : containers_) {
      if (!SelectorMatches(*Find(*service, "spec.selector"), c.pod->labels)) continue;
      ++selected;
      for (const Value* port : ListAt(*service, "spec.ports")) {
        EXPECT_GT(ContainerPort(*c.container, *Find(*port, "targetPort")), 0)
            << "Service " << name << " port " << StringAt(*port, "name") << " is not a port of "
            << c.where();
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
  ASSERT_EQ(ObjectsOfKind(objects, "PodDisruptionBudget").size(), 2u);
  for (const Value* budget : ObjectsOfKind(objects, "PodDisruptionBudget")) {
    EXPECT_TRUE(selects_some_pod(*Find(*budget, "spec.selector")))
        << StringAt(*budget, "metadata.name");
  }
  ASSERT_FALSE(ObjectsOfKind(objects, "NetworkPolicy").empty());
  for (const Value* policy : ObjectsOfKind(objects, "NetworkPolicy")) {
    const std::string name = StringAt(*policy, "metadata.name");
    EXPECT_TRUE(selects_some_pod(*Find(*policy, "spec.podSelector"))) << name;
    for (const Value* rule : ListAt(*policy, "spec.ingress")) {
      for (const Value* port : ListAt(*rule, "ports")) {
        EXPECT_THAT(std::vector<std::string>({"grpc", "metrics"}),
                    Contains(StringAt(*port, "port")))
            << name << ": a port by a name every container declares";
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
  // Every pod is scraped exactly once, by a ServiceMonitor through a
  // Service or by a PodMonitor, on the port --metrics_listen serves.
  for (const ResolvedContainer& c : containers) {
    absl::StatusOr<HostPort> metrics = ParseHostPort(FlagValue(c.args, "metrics_listen"));
    ASSERT_TRUE(metrics.ok()) << c.where() << ": --metrics_listen";
    EXPECT_EQ(metrics->host, "0.0.0.0") << c.where();
    Value name;
    name.set_string_value("metrics");
    EXPECT_EQ(ContainerPort(*c.container, name), metrics->port) << c.where();
    int scraped = 0;
    for (const Value* monitor : ObjectsOfKind(objects, "PodMonitor")) {
      if (SelectorMatches(*Find(*monitor, "spec.selector"), c.pod->labels)) ++scraped;
    }
    for (const Value* monitor : ObjectsOfKind(objects, "ServiceMonitor")) {
      for (const Value* service : ObjectsOfKind(objects, "Service")) {
        if (SelectorMatches(*Find(*monitor, "spec.selector"), Labels(*service)) &&
            SelectorMatches(*Find(*service, "spec.selector"), c.pod->labels)) {
          ++scraped;
        }
      }
    }
    EXPECT_EQ(scraped, 1) << c.where() << " is scraped " << scraped << " times";
  }
}

INSTANTIATE_TEST_SUITE_P(Overlays, ClusterPoliciesTest,
                         testing::Values("overlays/dev", "overlays/prod"),
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
                         testing::Values("overlays/dev", "overlays/prod", "tfjob"),
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
      ADD_FAILURE() << c.where() << ": Secret " << StringAt(*secret, "secretName")
                    << " mounted at " << StringAt(*mount, "mountPath") << " lists no item "
                    << file;
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
