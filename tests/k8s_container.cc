#include "tests/k8s_container.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/binary_locator.h"
#include "common/net/host_port.h"

namespace pstrain {
namespace k8s_testing {

std::pair<std::string, std::string> SplitFlag(const std::string& arg) {
  absl::string_view text = arg;
  if (!absl::ConsumePrefix(&text, "--")) return {"", arg};
  const std::pair<std::string, std::string> parts = absl::StrSplit(text, absl::MaxSplits('=', 1));
  return parts;
}

std::string FlagValue(const std::vector<std::string>& args, absl::string_view name) {
  for (const std::string& arg : args) {
    auto [flag, value] = SplitFlag(arg);
    if (flag == name) return value;
  }
  return "";
}

std::string WrittenFlag(const Value& container, absl::string_view name) {
  for (const Value* arg : ListAt(container, "args")) {
    auto [flag, value] = SplitFlag(arg->string_value());
    if (flag == name) return value;
  }
  return "";
}

const Value* EnvEntry(const Value& container, absl::string_view name) {
  for (const Value* entry : ListAt(container, "env")) {
    if (StringAt(*entry, "name") == name) return entry;
  }
  return nullptr;
}

std::string ResolvedContainer::where() const {
  return absl::StrCat(pod->name, "/", StringAt(*container, "name"), " (", pod->workload, ")");
}

int ResolvedContainer::ListenedPort(absl::string_view flag) const {
  auto it = listen_ports.find(std::string(flag));
  return it == listen_ports.end() ? 0 : it->second;
}

namespace {

// Resolves one container, appending to `problems` what would keep the
// kubelet from starting it as written; resolves as much as it can.
ResolvedContainer ResolveContainer(const Pod& pod, const Value& container,
                                   const std::vector<Value>& objects,
                                   std::vector<std::string>* problems) {
  ResolvedContainer entry;
  entry.pod = &pod;
  entry.container = &container;
  if (absl::StatusOr<std::map<std::string, std::string>> env =
          ContainerEnv(container, pod, objects);
      env.ok()) {
    entry.env = *std::move(env);
  } else {
    problems->push_back(absl::StrCat(entry.where(), ": ", env.status().ToString()));
  }
  const std::vector<const Value*> command = ListAt(container, "command");
  if (command.size() != 1) {
    problems->push_back(absl::StrCat(entry.where(), ": the command is the binary alone"));
  }
  if (!command.empty()) {
    absl::string_view path = command[0]->string_value();
    if (!absl::ConsumePrefix(&path, kBinDir)) {
      problems->push_back(
          absl::StrCat(entry.where(), ": ", command[0]->string_value(), " is not in ", kBinDir));
    }
    entry.binary = std::string(path);
  }
  for (const Value* arg : ListAt(container, "args")) {
    std::string expanded = ExpandEnvReferences(arg->string_value(), entry.env);
    if (absl::StrContains(expanded, "$(")) {
      problems->push_back(
          absl::StrCat(entry.where(), ": ", arg->string_value(), " names an undefined variable"));
    }
    entry.args.push_back(std::move(expanded));
  }
  for (const char* flag : kListenFlags) {
    const std::string listen = FlagValue(entry.args, flag);
    if (listen.empty()) continue;
    absl::StatusOr<HostPort> parsed = ParseHostPort(listen);
    if (!parsed.ok()) {
      problems->push_back(
          absl::StrCat(entry.where(), ": --", flag, ": ", parsed.status().ToString()));
      continue;
    }
    if (parsed->host != "0.0.0.0") {
      problems->push_back(
          absl::StrCat(entry.where(), ": --", flag, "=", listen, ": probes come from the node"));
    }
    entry.listen_ports[flag] = parsed->port;
  }
  return entry;
}

}  // namespace

absl::StatusOr<std::vector<ResolvedContainer>> ResolveContainers(
    const std::vector<Pod>& pods, const std::vector<Value>& objects) {
  std::vector<ResolvedContainer> resolved;
  std::vector<std::string> problems;
  for (const Pod& pod : pods) {
    for (const Value* container : ListAt(*pod.spec, "containers")) {
      resolved.push_back(ResolveContainer(pod, *container, objects, &problems));
    }
  }
  if (!problems.empty()) return absl::InvalidArgumentError(absl::StrJoin(problems, "\n"));
  return resolved;
}

absl::StatusOr<std::set<std::string>> AcceptedFlags(const std::string& binary) {
  absl::StatusOr<std::string> program = LocateBinary(binary, "");
  if (!program.ok()) return program.status();
  absl::StatusOr<std::string> help = RunShell(absl::StrCat(*program, " --helpfull"));
  if (!help.ok()) return help.status();
  std::set<std::string> flags;
  for (absl::string_view line : absl::StrSplit(*help, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "-")) continue;
    const size_t end = line.find(" (");
    if (end != absl::string_view::npos) flags.insert(std::string(line.substr(0, end)));
  }
  if (flags.count("listen") == 0) {
    return absl::InternalError(
        absl::StrCat(binary, " --helpfull lists no --listen; it printed:\n", *help));
  }
  return flags;
}

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

int NamedContainerPort(const Value& container, const std::string& name) {
  Value port_ref;
  port_ref.set_string_value(name);
  return ContainerPort(container, port_ref);
}

std::string PortRefText(const Value& port_ref) {
  return port_ref.has_string_value() ? port_ref.string_value()
                                     : absl::StrCat(port_ref.number_value());
}

PodPort FindPodPort(const std::vector<ResolvedContainer>& containers, const Pod& pod,
                    const Value& port_ref) {
  for (const ResolvedContainer& c : containers) {
    if (c.pod != &pod) continue;
    if (const int port = ContainerPort(*c.container, port_ref); port > 0) return {&c, port};
  }
  return {};
}

absl::StatusOr<std::string> SecretKeyOfFile(const ResolvedContainer& c, const std::string& path) {
  for (const Value* mount : ListAt(*c.container, "volumeMounts")) {
    absl::string_view file = path;
    if (!absl::ConsumePrefix(&file, StringAt(*mount, "mountPath") + "/")) continue;
    if (!BoolAt(*mount, "readOnly")) {
      return absl::FailedPreconditionError(absl::StrCat(c.where(), ": ", path, " is writable"));
    }
    for (const Value* volume : ListAt(*c.pod->spec, "volumes")) {
      if (StringAt(*volume, "name") != StringAt(*mount, "name")) continue;
      const Value* secret = Find(*volume, "secret");
      if (secret == nullptr) {
        return absl::FailedPreconditionError(
            absl::StrCat(c.where(), ": ", path, " is not from a Secret"));
      }
      for (const Value* item : ListAt(*secret, "items")) {
        if (StringAt(*item, "path") == file) return StringAt(*item, "key");
      }
      return absl::NotFoundError(
          absl::StrCat(c.where(), ": Secret ", StringAt(*secret, "secretName"), " mounted at ",
                       StringAt(*mount, "mountPath"), " lists no item ", file));
    }
  }
  return absl::NotFoundError(absl::StrCat(c.where(), ": ", path, " is in no mounted volume"));
}

}  // namespace k8s_testing
}  // namespace pstrain
