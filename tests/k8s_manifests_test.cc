// The Kubernetes manifests (deploy/k8s) as a reviewer would check them, on
// every rendering a user can deploy: the dev, prod and colocated overlays
// and the TFJob. Rendered with the kubectl on PATH; no cluster is needed.
// What sets one overlay apart from the others is checked in
// k8s_overlays_test.cc.
//
// What must hold: every container has gRPC probes on a port that answers
// them in plaintext (its health port, never a TLS port), requests and
// limits, a non-root read-only securityContext, a termination grace longer
// than its own shutdown grace; every flag it is given is one its binary
// accepts (from the binary's own --helpfull); names, ports, selectors and
// Services agree, looked up across every container of a pod (the colocated
// overlay runs a worker and a shard in one pod), and the containers of a
// pod share no port; the number of shards is the same everywhere it is
// written, and the number of workers is written once, in their replicas
// (so scaling them is one edit); workers can leave on SIGTERM without
// being held back; budgets, network policies and monitors reach every
// container's ports; and the example job specs are valid.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/config/job_spec.h"
#include "common/config/job_spec_parser.h"
#include "common/net/grpc_server.h"
#include "common/net/host_port.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/k8s_container.h"
#include "tests/k8s_manifest.h"

namespace pstrain {
namespace {

using k8s_testing::AcceptedFlags;
using k8s_testing::BoolAt;
using k8s_testing::ContainerPort;
using k8s_testing::ExpandPods;
using k8s_testing::Find;
using k8s_testing::FindObject;
using k8s_testing::FindPodPort;
using k8s_testing::FlagValue;
using k8s_testing::kBinaries;
using k8s_testing::kListenFlags;
using k8s_testing::ListAt;
using k8s_testing::NamedContainerPort;
using k8s_testing::NumberAt;
using k8s_testing::ObjectsOfKind;
using k8s_testing::Pod;
using k8s_testing::PodPort;
using k8s_testing::PortRefText;
using k8s_testing::Quantity;
using k8s_testing::ReadRunfile;
using k8s_testing::RenderManifests;
using k8s_testing::ResolveContainers;
using k8s_testing::ResolvedContainer;
using k8s_testing::SelectorMatches;
using k8s_testing::SplitFlag;
using k8s_testing::StringAt;
using k8s_testing::StringMap;
using k8s_testing::Value;
using ::testing::Contains;
using ::testing::HasSubstr;

class RenderedManifestsTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::vector<Value>> objects = RenderManifests(GetParam());
    ASSERT_TRUE(objects.ok()) << objects.status();
    objects_ = *std::move(objects);
    pods_ = ExpandPods(objects_);
    ASSERT_FALSE(pods_.empty()) << GetParam() << " renders no pod";
    absl::StatusOr<std::vector<ResolvedContainer>> containers = ResolveContainers(pods_, objects_);
    ASSERT_TRUE(containers.ok()) << containers.status();
    containers_ = *std::move(containers);
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
  // Each binary's --helpfull, run once per binary.
  std::map<std::string, absl::StatusOr<std::set<std::string>>> accepted_by_binary;
  for (const ResolvedContainer& c : containers_) {
    auto it = accepted_by_binary.find(c.binary);
    if (it == accepted_by_binary.end()) {
      it = accepted_by_binary.emplace(c.binary, AcceptedFlags(c.binary)).first;
      EXPECT_TRUE(it->second.ok()) << it->second.status();
    }
    const std::set<std::string> accepted = it->second.value_or(std::set<std::string>());
    for (const std::string& arg : c.args) {
      auto [flag, value] = SplitFlag(arg);
      ASSERT_FALSE(flag.empty()) << c.where() << ": '" << arg
                                 << "' is not --flag=value; daemons take no positional argument";
      EXPECT_THAT(accepted, Contains(flag))
          << c.where() << ": " << c.binary << " has no flag --" << flag;
    }
  }
}

// The kubelet's gRPC probes speak plaintext: they must reach a port that
// answers them in plaintext, the health port (--health_listen) when there is
// one, never a port that serves TLS.
TEST_P(RenderedManifestsTest, EveryContainerHasGrpcProbesOnAPlaintextHealthPort) {
  for (const ResolvedContainer& c : containers_) {
    // The port the daemon serves gRPC on: --listen's, else TF_CONFIG's entry
    // for it (the TFJob's tfjob-port).
    int serving_port = c.ListenedPort("listen");
    if (serving_port == 0) {
      ASSERT_FALSE(c.pod->replica_type.empty())
          << c.where() << ": no --listen: it would serve on loopback, out of the probes' reach";
      serving_port = NamedContainerPort(*c.container, "tfjob-port");
    }
    ASSERT_GT(serving_port, 0) << c.where();
    const int health_port = c.ListenedPort("health_listen");
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
    }
    // Ready while a member of the cluster; alive while the server serves.
    EXPECT_EQ(StringAt(*c.container, "readinessProbe.grpc.service"), kReadinessService)
        << c.where();
    EXPECT_EQ(StringAt(*c.container, "livenessProbe.grpc.service"), "")
        << c.where() << ": liveness is the whole server's health";
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
      for (const char* flag : kListenFlags) {
        if (const int port = c.ListenedPort(flag); port > 0) {
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
      const absl::StatusOr<double> requested = Quantity(request);
      const absl::StatusOr<double> limited = Quantity(limit);
      EXPECT_TRUE(requested.ok()) << c.where() << ": " << requested.status();
      EXPECT_TRUE(limited.ok()) << c.where() << ": " << limited.status();
      if (requested.ok() && limited.ok()) {
        EXPECT_LE(*requested, *limited) << c.where() << " " << resource;
      }
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
        EXPECT_THAT(ReadRunfile("deploy/README.md"), HasSubstr(StringAt(*secret, "secretName")))
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

// The number of workers is their replicas alone: no ConfigMap holds it and
// no daemon is told it, so `kubectl scale statefulset pstrain-worker` (or
// an overlay's replicas) is the whole change. A job starts with the workers
// registered when it starts, and later ones join it. (The TFJob's
// coordinator counts TF_CONFIG's cluster.worker, which the operator writes.)
TEST_P(RenderedManifestsTest, TheWorkerCountIsWrittenOnce) {
  for (const Value* map : ObjectsOfKind(objects_, "ConfigMap")) {
    const Value* data = Find(*map, "data");
    if (data == nullptr) continue;
    for (const auto& [key, value] : data->struct_value().fields()) {
      EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(key), "worker"))
          << "ConfigMap " << StringAt(*map, "metadata.name") << " holds " << key
          << ", which would have to change with the workers' replicas";
    }
  }
  for (const ResolvedContainer& c : containers_) {
    for (const std::string& arg : c.args) {
      EXPECT_NE(SplitFlag(arg).first, "num_workers")
          << c.where() << ": " << arg << " would have to change with the workers' replicas";
    }
  }
}

// A scale-down, a drain or an upgrade sends a worker SIGTERM; it hands its
// data lease back, tells the coordinator it leaves and exits, in a few
// seconds. Its pod gives it the time (TerminationGraceOutlastsTheShutdownGrace
// checks the bound), nothing delays the signal (a preStop hook runs before
// it), and the disruption budget over pods of workers alone lets them be
// evicted (a minAvailable would refuse evictions at that floor; budgets
// never hold back a scale-down, which deletes pods without evicting them).
TEST_P(RenderedManifestsTest, WorkersLeaveWithoutBeingHeldBack) {
  for (const ResolvedContainer* c : OfBinary("pstrain-worker")) {
    EXPECT_GE(NumberAt(*c->pod->spec, "terminationGracePeriodSeconds"), 10)
        << c->where() << ": too short to hand the lease back";
    EXPECT_EQ(Find(*c->container, "lifecycle.preStop"), nullptr)
        << c->where() << ": a preStop hook delays SIGTERM, and so the lease's return";
  }
  for (const Value* budget : ObjectsOfKind(objects_, "PodDisruptionBudget")) {
    bool workers_alone = false;
    for (const Pod& pod : pods_) {
      if (!SelectorMatches(*Find(*budget, "spec.selector"), pod.labels)) continue;
      int workers = 0;
      int others = 0;
      for (const ResolvedContainer& c : containers_) {
        if (c.pod == &pod) ++(c.binary == "pstrain-worker" ? workers : others);
      }
      workers_alone = workers_alone || (workers > 0 && others == 0);
    }
    if (!workers_alone) continue;
    EXPECT_EQ(Find(*budget, "spec.minAvailable"), nullptr) << StringAt(*budget, "metadata.name");
    EXPECT_GE(NumberAt(*budget, "spec.maxUnavailable"), 1) << StringAt(*budget, "metadata.name");
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
    EXPECT_TRUE(
        SelectorMatches(*Find(*workload, "spec.selector"), ExpandPods({*workload}).front().labels));
  }
}

// Disruption budgets, network policies and Prometheus monitors come with
// the plain manifests (the TFJob's pods belong to the operator).
class ClusterPoliciesTest : public testing::TestWithParam<std::string> {};

TEST_P(ClusterPoliciesTest, PoliciesAndMonitorsSelectWhatExists) {
  absl::StatusOr<std::vector<Value>> rendered = RenderManifests(GetParam());
  ASSERT_TRUE(rendered.ok()) << rendered.status();
  const std::vector<Value>& objects = *rendered;
  const std::vector<Pod> pods = ExpandPods(objects);
  absl::StatusOr<std::vector<ResolvedContainer>> resolved = ResolveContainers(pods, objects);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const std::vector<ResolvedContainer>& containers = *resolved;
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
  EXPECT_EQ(StringMap(Find(*from[0], "podSelector.matchLabels"))["app.kubernetes.io/part-of"],
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
           StringMap(Find(peer, "podSelector.matchLabels"))["app.kubernetes.io/part-of"] ==
               "pstrain";
  };
  auto prometheus = [](const Value& peer) {
    return StringMap(Find(peer, "namespaceSelector.matchLabels"))["kubernetes.io/metadata.name"] ==
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
        const std::map<std::string, std::string> labels =
            StringMap(Find(*service, "metadata.labels"));
        if (!SelectorMatches(*Find(*monitor, "spec.selector"), labels) ||
            !SelectorMatches(*Find(*service, "spec.selector"), c.pod->labels)) {
          continue;
        }
        for (const Value* endpoint : ListAt(*monitor, "spec.endpoints")) {
          for (const Value* port : ListAt(*service, "spec.ports")) {
            if (StringAt(*port, "name") == StringAt(*endpoint, "port") &&
                is_metrics(FindPodPort(containers, *c.pod, *Find(*port, "targetPort")))) {
              ++scraped;
              // The coordinator's port carries the console: HTTPS under TLS.
              const auto component = c.pod->labels.find("app.kubernetes.io/component");
              const bool https = component != c.pod->labels.end() &&
                                 component->second == "coordinator" &&
                                 !FlagValue(c.args, "tls_cert").empty();
              EXPECT_EQ(StringAt(*endpoint, "scheme"), https ? "https" : "")
                  << c.where() << " is scraped by ServiceMonitor "
                  << StringAt(*monitor, "metadata.name");
            }
          }
        }
      }
    }
    EXPECT_EQ(scraped, 1) << c.where() << " is scraped " << scraped << " times";
    EXPECT_TRUE(opens(c, metrics->port, prometheus))
        << c.where() << ": no network policy lets Prometheus reach port " << metrics->port;
    if (const int grpc = c.ListenedPort("listen"); grpc > 0) {
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
        const std::map<std::string, std::string> labels =
            StringMap(Find(*service, "metadata.labels"));
        if (!SelectorMatches(*Find(*monitor, "spec.selector"), labels)) continue;
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
                                         "tfjob", k8s_testing::kGeneratedTfJob),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!absl::ascii_isalnum(c)) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace pstrain
