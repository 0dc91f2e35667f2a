// What sets each rendering of deploy/k8s apart, beyond what holds of every
// one (k8s_manifests_test.cc): dev is small and prod spread over nodes;
// prod runs every channel under mutual TLS with both tokens, from mounted
// Secrets; the colocated overlay pairs each shard with one worker; and the
// TFJob's replicas are the four roles as the operator expects them.
// Rendered with the kubectl on PATH; no cluster is needed.

#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/k8s_container.h"
#include "tests/k8s_manifest.h"

namespace pstrain {
namespace {

using k8s_testing::BoolAt;
using k8s_testing::EnvEntry;
using k8s_testing::ExpandPods;
using k8s_testing::Find;
using k8s_testing::FindObject;
using k8s_testing::FlagValue;
using k8s_testing::kBinDir;
using k8s_testing::kListenFlags;
using k8s_testing::ListAt;
using k8s_testing::NamedContainerPort;
using k8s_testing::NumberAt;
using k8s_testing::ObjectsOfKind;
using k8s_testing::Pod;
using k8s_testing::ReadRunfile;
using k8s_testing::RenderManifests;
using k8s_testing::RenderManifestsWithReplicas;
using k8s_testing::ResolveContainers;
using k8s_testing::ResolvedContainer;
using k8s_testing::SecretKeyOfFile;
using k8s_testing::SplitFlag;
using k8s_testing::StringAt;
using k8s_testing::Value;
using k8s_testing::WrittenFlag;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

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

// The colocated overlay's purpose: worker i beside shard i in one pod, so
// that each worker reaches one shard through a shared-memory lane (same
// network namespace, same kernel) and the others over gRPC.
TEST(OverlaysTest, ColocatedPodsPairEachShardWithOneWorker) {
  absl::StatusOr<std::vector<Value>> colocated = RenderManifests("overlays/colocated");
  ASSERT_TRUE(colocated.ok()) << colocated.status();
  const std::vector<Pod> pods = ExpandPods(*colocated);
  absl::StatusOr<std::vector<ResolvedContainer>> resolved = ResolveContainers(pods, *colocated);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const std::vector<ResolvedContainer>& containers = *resolved;
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
  const std::set<std::string> port_flags(std::begin(kListenFlags), std::end(kListenFlags));
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
    for (const std::string& flag : port_flags) ps_ports.insert(ps.ListenedPort(flag));
    ASSERT_GE(ps_ports.size(), 3u) << ps.where();
    for (const Value* port : ListAt(*worker.container, "ports")) {
      EXPECT_EQ(ps_names.count(StringAt(*port, "name")), 0u)
          << worker.where() << ": port name " << StringAt(*port, "name") << " is the shard's";
      EXPECT_EQ(ps_ports.count(static_cast<int>(NumberAt(*port, "containerPort"))), 0u)
          << worker.where() << ": port " << NumberAt(*port, "containerPort") << " is the shard's";
    }
    for (const std::string& flag : port_flags) {
      const int port = worker.ListenedPort(flag);
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

  // As many workers as shards: the shards' count, wherever it is written,
  // is the pods', and so the workers'. The workers' count is written
  // nowhere else (k8s_manifests_test checks every rendering for that).
  const Value* shape = nullptr;
  for (const Value* map : ObjectsOfKind(*colocated, "ConfigMap")) {
    if (absl::StartsWith(StringAt(*map, "metadata.name"), "pstrain-cluster")) shape = map;
  }
  ASSERT_NE(shape, nullptr) << "no pstrain-cluster ConfigMap";
  EXPECT_EQ(StringAt(*shape, "data.num_ps"), absl::StrCat(paired));
  int coordinators = 0;
  for (const ResolvedContainer& c : containers) {
    if (c.binary != "pstrain-coordinator") continue;
    ++coordinators;
    EXPECT_EQ(FlagValue(c.args, "num_ps"), absl::StrCat(paired)) << c.where();
  }
  EXPECT_EQ(coordinators, 1);

  const std::string readme = ReadRunfile("deploy/README.md");
  EXPECT_TRUE(absl::StrContains(readme, "kubectl apply -k deploy/k8s/overlays/colocated"))
      << "deploy/README.md does not tell how to deploy the colocated overlay";
}

// The replicated overlay gives every shard a hot-standby backup
// (docs/design/replicas.md): twice the parameter-server pods, the
// coordinator told so (--ps_replicas=1, --num_ps counting every pod), each
// pod with an address in the list, and no two of them on one node, so a
// shard's primary and its backup never share one.
TEST(OverlaysTest, ReplicatedGivesEachShardABackupOnAnotherNode) {
  absl::StatusOr<std::vector<Value>> prod = RenderManifests("overlays/prod");
  absl::StatusOr<std::vector<Value>> replicated = RenderManifests("overlays/replicated");
  ASSERT_TRUE(prod.ok()) << prod.status();
  ASSERT_TRUE(replicated.ok()) << replicated.status();
  const Value* prod_ps = FindObject(*prod, "StatefulSet", "pstrain-ps");
  const Value* ps = FindObject(*replicated, "StatefulSet", "pstrain-ps");
  ASSERT_NE(prod_ps, nullptr);
  ASSERT_NE(ps, nullptr);
  const int pods = static_cast<int>(NumberAt(*ps, "spec.replicas"));
  EXPECT_EQ(pods, 2 * NumberAt(*prod_ps, "spec.replicas")) << "a primary and a backup per shard";
  const std::vector<const Value*> anti = ListAt(
      *ps,
      "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution");
  ASSERT_EQ(anti.size(), 1u) << "one parameter server per node";
  EXPECT_EQ(StringAt(*anti[0], "topologyKey"), "kubernetes.io/hostname");

  absl::StatusOr<std::vector<ResolvedContainer>> resolved =
      ResolveContainers(ExpandPods(*replicated), *replicated);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  int coordinators = 0, shards = 0;
  for (const ResolvedContainer& c : *resolved) {
    if (c.binary == "pstrain-coordinator") {
      ++coordinators;
      EXPECT_EQ(FlagValue(c.args, "ps_replicas"), "1") << c.where();
      EXPECT_EQ(FlagValue(c.args, "num_ps"), absl::StrCat(pods)) << c.where();
    }
    if (c.binary == "pstrain-ps") {
      ++shards;
      const std::vector<std::string> addresses =
          absl::StrSplit(FlagValue(c.args, "ps_addresses"), ',');
      EXPECT_EQ(static_cast<int>(addresses.size()), pods) << c.where();
    }
  }
  EXPECT_EQ(coordinators, 1);
  EXPECT_EQ(shards, pods);

  // Without the overlay there is no backup.
  absl::StatusOr<std::vector<ResolvedContainer>> plain = ResolveContainers(ExpandPods(*prod), *prod);
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (const ResolvedContainer& c : *plain) {
    if (c.binary == "pstrain-coordinator") EXPECT_EQ(FlagValue(c.args, "ps_replicas"), "0");
  }
  const std::string readme = ReadRunfile("deploy/README.md");
  EXPECT_TRUE(absl::StrContains(readme, "kubectl apply -k deploy/k8s/overlays/replicated"))
      << "deploy/README.md does not tell how to deploy the replicated overlay";
}

// Scaling the workers is one edit, their replicas (an overlay's `replicas:`
// entry, or `kubectl scale statefulset pstrain-worker`), up or down: every
// other object renders as before, so no other object needs changing with
// it and no other pod restarts (a ConfigMap the pods read keeps its hashed
// name), and each pod of the new count has its own index.
TEST(OverlaysTest, WorkersScaleByTheirReplicasAlone) {
  using google::protobuf::util::MessageDifferencer;
  auto key = [](const Value& object) {
    return absl::StrCat(StringAt(object, "kind"), "/", StringAt(object, "metadata.name"));
  };
  for (const std::string overlay : {"overlays/dev", "overlays/prod"}) {
    absl::StatusOr<std::vector<Value>> before = RenderManifests(overlay);
    ASSERT_TRUE(before.ok()) << before.status();
    const Value* workers = FindObject(*before, "StatefulSet", "pstrain-worker");
    ASSERT_NE(workers, nullptr) << overlay;
    const int count = static_cast<int>(NumberAt(*workers, "spec.replicas"));
    std::vector<int> scaled_counts = {count + 3};
    if (count > 1) scaled_counts.push_back(1);
    for (int scaled : scaled_counts) {
      const std::string where = absl::StrCat(overlay, " with ", scaled, " workers");
      absl::StatusOr<std::vector<Value>> after =
          RenderManifestsWithReplicas(overlay, "pstrain-worker", scaled);
      ASSERT_TRUE(after.ok()) << after.status();
      ASSERT_EQ(after->size(), before->size()) << where;
      std::map<std::string, const Value*> before_by_key;
      for (const Value& object : *before) before_by_key[key(object)] = &object;
      for (const Value& object : *after) {
        auto it = before_by_key.find(key(object));
        ASSERT_NE(it, before_by_key.end())
            << where << ": " << key(object) << " is new (a ConfigMap whose content changed?)";
        Value expected = *it->second;
        if (key(object) == "StatefulSet/pstrain-worker") {
          EXPECT_EQ(NumberAt(object, "spec.replicas"), scaled) << where;
          (*expected.mutable_struct_value()
                ->mutable_fields()
                ->at("spec")
                .mutable_struct_value()
                ->mutable_fields())["replicas"]
              .set_number_value(scaled);
        }
        EXPECT_TRUE(MessageDifferencer::Equals(object, expected))
            << where << ": " << key(object) << " changed with the workers' replicas";
      }
      // A cluster of the new size as it stands: no daemon is told, and no
      // ConfigMap holds, a number of workers other than the new one.
      for (const Value* map : ObjectsOfKind(*after, "ConfigMap")) {
        const Value* data = Find(*map, "data");
        if (data == nullptr) continue;
        for (const auto& [data_key, value] : data->struct_value().fields()) {
          if (!absl::StrContains(data_key, "worker")) continue;
          EXPECT_EQ(value.string_value(), absl::StrCat(scaled))
              << where << ": ConfigMap " << StringAt(*map, "metadata.name") << " " << data_key;
        }
      }
      const std::vector<Pod> pods = ExpandPods(*after);
      absl::StatusOr<std::vector<ResolvedContainer>> resolved = ResolveContainers(pods, *after);
      ASSERT_TRUE(resolved.ok()) << where << ": " << resolved.status();
      std::set<std::string> indexes;
      for (const ResolvedContainer& c : *resolved) {
        if (c.binary == "pstrain-worker") indexes.insert(FlagValue(c.args, "task_index"));
        const std::string told = FlagValue(c.args, "num_workers");
        EXPECT_TRUE(told.empty() || told == absl::StrCat(scaled))
            << where << ": " << c.where() << " is told --num_workers=" << told;
      }
      std::set<std::string> expected_indexes;
      for (int i = 0; i < scaled; ++i) expected_indexes.insert(absl::StrCat(i));
      EXPECT_EQ(indexes, expected_indexes) << where;
    }
  }
  EXPECT_THAT(ReadRunfile("deploy/README.md"),
              HasSubstr("scale statefulset pstrain-worker --replicas="))
      << "deploy/README.md does not tell how to scale the workers";
}

// Production runs every gRPC channel under mutual TLS with both tokens,
// every file from a mounted Secret whose keys deploy/README.md tells how to
// create; the probes use the plaintext health port (checked for every
// rendering above).
TEST(OverlaysTest, ProdRunsEveryChannelUnderMutualTlsWithBothTokens) {
  absl::StatusOr<std::vector<Value>> prod = RenderManifests("overlays/prod");
  ASSERT_TRUE(prod.ok()) << prod.status();
  const std::vector<Pod> pods = ExpandPods(*prod);
  absl::StatusOr<std::vector<ResolvedContainer>> resolved = ResolveContainers(pods, *prod);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  const std::vector<ResolvedContainer>& containers = *resolved;
  ASSERT_FALSE(containers.empty());
  const std::string readme = ReadRunfile("deploy/README.md");
  for (const ResolvedContainer& c : containers) {
    EXPECT_EQ(FlagValue(c.args, "tls_client_auth"), "require") << c.where();
    for (const char* flag :
         {"tls_cert", "tls_key", "tls_ca", "client_token_file", "cluster_token_file"}) {
      const std::string path = FlagValue(c.args, flag);
      ASSERT_FALSE(path.empty()) << c.where() << ": no --" << flag;
      const absl::StatusOr<std::string> key = SecretKeyOfFile(c, path);
      EXPECT_TRUE(key.ok()) << key.status();
      if (!key.ok()) continue;
      EXPECT_THAT(readme, HasSubstr(*key))
          << c.where() << ": deploy/README.md does not say what goes in the Secret key " << *key;
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
    EXPECT_GT(NamedContainerPort(*containers[0], "tfjob-port"), 0) << type;
    EXPECT_EQ(Find(*containers[0], "env"), nullptr)
        << type << ": the cluster comes from TF_CONFIG alone";
  }
  EXPECT_EQ(NumberAt(*Find(*specs, "Chief"), "replicas"), 1);
}

}  // namespace
}  // namespace pstrain
