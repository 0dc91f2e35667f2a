#include "tests/k8s_manifest.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "client/binary_locator.h"
#include "common/process/child_process.h"
#include "google/protobuf/util/json_util.h"

namespace pstrain {
namespace k8s_testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::stringstream contents;
  contents << std::ifstream(path).rdbuf();
  return contents.str();
}

// Splits the concatenated JSON objects kubectl prints ("{...}\n{...}\n")
// at the end of each top-level object.
std::vector<std::string> SplitJsonStream(const std::string& text) {
  std::vector<std::string> objects;
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{') {
      if (depth++ == 0) start = i;
    } else if (c == '}' && --depth == 0) {
      objects.push_back(text.substr(start, i - start + 1));
    }
  }
  return objects;
}

}  // namespace

absl::StatusOr<std::string> RunShell(const std::string& command) {
  static int counter = 0;
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string base =
      absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/k8s_shell_", ::getpid(), "_", ++counter);
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(
      {"/bin/sh", {"-c", absl::StrCat("(", command, ") > ", base, ".out 2> ", base, ".err")}, {},
       ""});
  if (!child.ok()) return child.status();
  absl::StatusOr<ExitStatus> exit = (*child)->Wait(absl::Minutes(2));
  if (!exit.ok()) return exit.status();
  if (!exit->ok()) {
    return absl::InternalError(absl::StrCat("`", command, "` ended with ", exit->ToString(),
                                            ":\n", ReadFile(base + ".err")));
  }
  return ReadFile(base + ".out");
}

std::string RunfilesPath(const std::string& relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir != nullptr ? srcdir : ".", "/",
                      workspace != nullptr ? workspace : "pstrain", "/", relative);
}

std::string ReadRunfile(const std::string& relative) { return ReadFile(RunfilesPath(relative)); }

namespace {

// Renders deploy/k8s/`name` from a fresh copy of the tree; with
// `overlay_text`, renders instead a kustomization of that text placed in
// a folder beside `name`'s (so "../<leaf of name>" names it).
absl::StatusOr<std::vector<Value>> RenderCopy(
    const std::string& name, const std::string& overlay_text,
    const std::map<std::string, std::string>& overlay_files = {}) {
  static int counter = 0;
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string copy = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/k8s_render_", ++counter);
  absl::StatusOr<std::string> copied =
      RunShell(absl::StrCat("rm -rf ", copy, " && cp -rL ", RunfilesPath("deploy/k8s"), " ", copy));
  if (!copied.ok()) return copied.status();
  std::string rendered_dir = absl::StrCat(copy, "/", name);
  if (!overlay_text.empty()) {
    rendered_dir = absl::StrCat(rendered_dir, "-on-top");
    if (::mkdir(rendered_dir.c_str(), 0755) != 0) {
      return absl::InternalError(absl::StrCat("cannot create ", rendered_dir));
    }
    std::map<std::string, std::string> files = overlay_files;
    files["kustomization.yaml"] = overlay_text;
    for (const auto& [file_name, text] : files) {
      std::ofstream file(absl::StrCat(rendered_dir, "/", file_name));
      file << text;
      file.close();
      if (!file) return absl::InternalError(absl::StrCat("cannot write ", rendered_dir));
    }
  }
  // `kubectl annotate --local -o json` prints the objects of a file as
  // JSON without asking a cluster (kubectl create/apply --dry-run=client
  // both look up the API server); removing an annotation nobody set leaves
  // each object as rendered.
  absl::StatusOr<std::string> json =
      RunShell(absl::StrCat("kubectl kustomize ", rendered_dir,
                            " | kubectl annotate --local -f - -o json pstrain.io/unset-"));
  if (!json.ok()) return json.status();
  std::vector<Value> objects;
  for (const std::string& text : SplitJsonStream(*json)) {
    Value object;
    if (auto parsed = google::protobuf::util::JsonStringToMessage(text, &object); !parsed.ok()) {
      return absl::InternalError(absl::StrCat("kubectl printed JSON that does not parse: ",
                                              parsed.ToString(), "\n", text));
    }
    objects.push_back(std::move(object));
  }
  if (objects.empty()) return absl::InternalError("kubectl kustomize rendered no object");
  return objects;
}

// kGeneratedTfJob: `pstrain k8s` of the example job, beside deploy/k8s/tfjob.
absl::StatusOr<std::vector<Value>> RenderGeneratedTfJob() {
  absl::StatusOr<std::string> pstrain = LocateBinary("pstrain", "");
  if (!pstrain.ok()) return pstrain.status();
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string spec = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/clicks_logistic.pbtxt");
  std::string text = ReadRunfile("deploy/k8s/shared/jobs/clicks_logistic.pbtxt");
  if (!absl::StrContains(text, "max_steps: 300")) {
    return absl::InternalError("the example job no longer says max_steps: 300");
  }
  std::ofstream(spec) << absl::StrReplaceAll(
      text, {{"max_steps: 300", absl::StrCat("max_steps: ", kGeneratedTfJobSteps)}});
  absl::StatusOr<std::string> manifest =
      RunShell(absl::StrCat(*pstrain, " k8s ", spec, " --ps=2 --workers=2 --image=pstrain:dev"));
  if (!manifest.ok()) return manifest.status();
  return RenderCopy("tfjob",
                    "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                    "kind: Kustomization\n"
                    "namespace: pstrain-tfjob\n"
                    "resources: [\"../shared\", \"run.yaml\"]\n",
                    {{"run.yaml", *manifest}});
}

}  // namespace

absl::StatusOr<std::vector<Value>> RenderManifests(const std::string& name) {
  // Rendering takes a second or two; every test of a binary sees the same
  // files.
  static auto* rendered = new std::map<std::string, std::vector<Value>>();
  if (auto it = rendered->find(name); it != rendered->end()) return it->second;
  absl::StatusOr<std::vector<Value>> objects =
      name == kGeneratedTfJob ? RenderGeneratedTfJob() : RenderCopy(name, "");
  if (objects.ok()) (*rendered)[name] = *objects;
  return objects;
}

absl::StatusOr<std::vector<Value>> RenderManifestsWithReplicas(const std::string& name,
                                                               const std::string& workload,
                                                               int count) {
  const std::vector<std::string> parts = absl::StrSplit(name, '/');
  return RenderCopy(name, absl::StrCat("apiVersion: kustomize.config.k8s.io/v1beta1\n",
                                       "kind: Kustomization\n",
                                       "resources: [\"../", parts.back(), "\"]\n",
                                       "replicas: [{name: ", workload, ", count: ", count, "}]\n"));
}

const Value* Find(const Value& root, absl::string_view path) {
  const Value* value = &root;
  for (absl::string_view part : absl::StrSplit(path, '.', absl::SkipEmpty())) {
    if (!value->has_struct_value()) return nullptr;
    const auto& fields = value->struct_value().fields();
    auto it = fields.find(std::string(part));
    if (it == fields.end()) return nullptr;
    value = &it->second;
  }
  return value;
}

std::string StringAt(const Value& root, absl::string_view path) {
  const Value* value = Find(root, path);
  return value != nullptr && value->has_string_value() ? value->string_value() : "";
}

double NumberAt(const Value& root, absl::string_view path) {
  const Value* value = Find(root, path);
  return value != nullptr && value->kind_case() == Value::kNumberValue ? value->number_value()
                                                                       : -1;
}

bool BoolAt(const Value& root, absl::string_view path) {
  const Value* value = Find(root, path);
  return value != nullptr && value->kind_case() == Value::kBoolValue && value->bool_value();
}

std::vector<const Value*> ListAt(const Value& root, absl::string_view path) {
  std::vector<const Value*> items;
  const Value* value = Find(root, path);
  if (value == nullptr || !value->has_list_value()) return items;
  for (const Value& item : value->list_value().values()) items.push_back(&item);
  return items;
}

std::vector<const Value*> ObjectsOfKind(const std::vector<Value>& objects,
                                        absl::string_view kind) {
  std::vector<const Value*> found;
  for (const Value& object : objects) {
    if (StringAt(object, "kind") == kind) found.push_back(&object);
  }
  return found;
}

const Value* FindObject(const std::vector<Value>& objects, absl::string_view kind,
                        absl::string_view name) {
  for (const Value* object : ObjectsOfKind(objects, kind)) {
    if (StringAt(*object, "metadata.name") == name) return object;
  }
  return nullptr;
}

std::map<std::string, std::string> StringMap(const Value* value) {
  std::map<std::string, std::string> map;
  if (value == nullptr || !value->has_struct_value()) return map;
  for (const auto& [key, item] : value->struct_value().fields()) {
    map[key] = item.string_value();
  }
  return map;
}

absl::StatusOr<double> Quantity(absl::string_view text) {
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
  double value = 0;
  if (!absl::SimpleAtod(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("not a quantity: ", text));
  }
  return value;
}

std::vector<Pod> ExpandPods(const std::vector<Value>& objects) {
  std::vector<Pod> pods;
  for (const Value& object : objects) {
    const std::string kind = StringAt(object, "kind");
    const std::string name = StringAt(object, "metadata.name");
    const std::string namespace_name = StringAt(object, "metadata.namespace");
    if (kind == "Deployment" || kind == "StatefulSet") {
      const double replicas = NumberAt(object, "spec.replicas");
      for (int i = 0; i < (replicas < 0 ? 1 : static_cast<int>(replicas)); ++i) {
        Pod pod;
        pod.name = absl::StrCat(name, "-", i);
        pod.workload = absl::StrCat(kind, "/", name);
        pod.namespace_name = namespace_name;
        pod.index = i;
        pod.labels = StringMap(Find(object, "spec.template.metadata.labels"));
        if (kind == "StatefulSet") {
          pod.subdomain = StringAt(object, "spec.serviceName");
          pod.labels["apps.kubernetes.io/pod-index"] = absl::StrCat(i);
          pod.labels["statefulset.kubernetes.io/pod-name"] = pod.name;
        }
        pod.spec = Find(object, "spec.template.spec");
        pods.push_back(std::move(pod));
      }
    } else if (kind == "TFJob") {
      const Value* specs = Find(object, "spec.tfReplicaSpecs");
      if (specs == nullptr || !specs->has_struct_value()) continue;
      for (const auto& [replica_type, spec] : specs->struct_value().fields()) {
        const double replicas = NumberAt(spec, "replicas");
        const std::string type = absl::AsciiStrToLower(replica_type);
        for (int i = 0; i < (replicas < 0 ? 1 : static_cast<int>(replicas)); ++i) {
          Pod pod;
          // The operator names pod and Service <job>-<type>-<index>.
          pod.name = absl::StrCat(name, "-", type, "-", i);
          pod.workload = absl::StrCat(kind, "/", name, ":", replica_type);
          pod.namespace_name = namespace_name;
          pod.index = i;
          pod.replica_type = type;
          pod.labels = StringMap(Find(spec, "template.metadata.labels"));
          pod.labels["training.kubeflow.org/replica-type"] = type;
          pod.labels["training.kubeflow.org/replica-index"] = absl::StrCat(i);
          pod.spec = Find(spec, "template.spec");
          pods.push_back(std::move(pod));
        }
      }
    }
  }
  return pods;
}

absl::StatusOr<std::map<std::string, std::string>> ContainerEnv(
    const Value& container, const Pod& pod, const std::vector<Value>& objects) {
  std::map<std::string, std::string> env;
  for (const Value* entry : ListAt(container, "env")) {
    const std::string name = StringAt(*entry, "name");
    if (Find(*entry, "value") != nullptr) {
      env[name] = ExpandEnvReferences(StringAt(*entry, "value"), env);
    } else if (const Value* ref = Find(*entry, "valueFrom.configMapKeyRef")) {
      const std::string map_name = StringAt(*ref, "name");
      const std::string key = StringAt(*ref, "key");
      const Value* map = FindObject(objects, "ConfigMap", map_name);
      const Value* value = map == nullptr ? nullptr : Find(*map, absl::StrCat("data.", key));
      if (value == nullptr) {
        return absl::NotFoundError(absl::StrCat(pod.name, ": env ", name, " refers to ConfigMap ",
                                                map_name, " key ", key, ", which is not rendered"));
      }
      env[name] = value->string_value();
    } else if (const Value* ref = Find(*entry, "valueFrom.fieldRef")) {
      const std::string field_path = StringAt(*ref, "fieldPath");
      absl::string_view path = field_path;
      if (path == "metadata.name") {
        env[name] = pod.name;
      } else if (path == "metadata.namespace") {
        env[name] = pod.namespace_name;
      } else if (absl::ConsumePrefix(&path, "metadata.labels['") &&
                 absl::ConsumeSuffix(&path, "']") && pod.labels.count(std::string(path)) > 0) {
        env[name] = pod.labels.at(std::string(path));
      } else {
        return absl::NotFoundError(absl::StrCat(pod.name, ": env ", name, " refers to field ",
                                                StringAt(*ref, "fieldPath"),
                                                ", which the pod does not have"));
      }
    } else {
      return absl::NotFoundError(absl::StrCat(pod.name, ": env ", name, " has no value"));
    }
  }
  return env;
}

std::string ExpandEnvReferences(const std::string& text,
                                const std::map<std::string, std::string>& env) {
  std::string result;
  size_t i = 0;
  while (i < text.size()) {
    const size_t open = text.find("$(", i);
    if (open == std::string::npos) break;
    const size_t close = text.find(')', open);
    if (close == std::string::npos) break;
    result += text.substr(i, open - i);
    auto it = env.find(text.substr(open + 2, close - open - 2));
    result += it != env.end() ? it->second : text.substr(open, close - open + 1);
    i = close + 1;
  }
  return result + text.substr(i);
}

bool SelectorMatches(const Value& selector, const std::map<std::string, std::string>& labels) {
  const bool structured = Find(selector, "matchLabels") != nullptr ||
                          Find(selector, "matchExpressions") != nullptr;
  const std::map<std::string, std::string> match =
      StringMap(structured ? Find(selector, "matchLabels") : &selector);
  for (const auto& [key, value] : match) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const Value* expression : ListAt(selector, "matchExpressions")) {
    const std::string key = StringAt(*expression, "key");
    const std::string op = StringAt(*expression, "operator");
    auto it = labels.find(key);
    bool in_values = false;
    for (const Value* value : ListAt(*expression, "values")) {
      in_values = in_values || (it != labels.end() && value->string_value() == it->second);
    }
    if ((op == "In" && !in_values) || (op == "NotIn" && in_values) ||
        (op == "Exists" && it == labels.end()) || (op == "DoesNotExist" && it != labels.end())) {
      return false;
    }
  }
  return true;
}

}  // namespace k8s_testing
}  // namespace pstrain
