#include "tests/node_script.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/process/child_process.h"
#include "common/status/status_macros.h"

namespace pstrain {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

bool IsExecutableFile(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

// ChildProcess wants a program path, and the machine's node may live
// anywhere on PATH (a newer Node than Debian's comes first on some images).
absl::StatusOr<std::string> FindNode() {
  const char* path = std::getenv("PATH");
  std::vector<std::string> candidates;
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "", ':')) {
    if (!dir.empty()) candidates.push_back(absl::StrCat(dir, "/node"));
  }
  candidates.push_back("/usr/bin/node");
  for (const std::string& candidate : candidates) {
    if (IsExecutableFile(candidate)) return candidate;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot find node on PATH (", path != nullptr ? path : "",
                   ") or at /usr/bin/node; scripts/setup.sh installs it"));
}

// Bazel sets TEST_SRCDIR for tests and RUNFILES_DIR for what `bazel run`
// starts; a binary started by hand has its tree beside it.
std::string RunfilesRoot() {
  for (const char* variable : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    const char* dir = std::getenv(variable);
    if (dir != nullptr && *dir != '\0') return dir;
  }
  std::error_code error;
  return fs::read_symlink("/proc/self/exe", error).string() + ".runfiles";
}

struct RunfilePaths {
  std::string script;
  std::string node_modules;
};

absl::StatusOr<RunfilePaths> FindRunfiles(const NodeScript& script) {
  const std::string root = RunfilesRoot();
  const char* workspace = std::getenv("TEST_WORKSPACE");
  RunfilePaths paths{
      absl::StrCat(root, "/", workspace != nullptr ? workspace : "pstrain", "/", script.script),
      absl::StrCat(root, "/", script.node_modules_repository)};
  if (!fs::exists(paths.script)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot find ", paths.script, "; make it a data dependency of the test"));
  }
  if (!fs::exists(
          absl::StrCat(paths.node_modules, "/", script.required_package, "/package.json"))) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot find ", script.required_package, " in ", paths.node_modules, " (@",
        script.node_modules_repository, " in WORKSPACE); scripts/setup.sh installs it"));
  }
  return paths;
}

absl::StatusOr<std::string> MakeLogFolder() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/node_run_XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot create a folder like ", pattern, ": ", std::strerror(errno)));
  }
  return pattern;
}

}  // namespace

absl::StatusOr<std::string> RunNodeScript(const NodeScript& script,
                                          const std::vector<std::string>& args) {
  ASSIGN_OR_RETURN(const std::string node, FindNode());
  ASSIGN_OR_RETURN(const RunfilePaths runfiles, FindRunfiles(script));
  ASSIGN_OR_RETURN(const std::string dir, MakeLogFolder());
  ChildProcessOptions options;
  options.program = node;
  // Keep module lookup inside the runfiles tree (what Bazel declared)
  // instead of following its symlinks back into the source tree.
  options.args = {"--preserve-symlinks", "--preserve-symlinks-main", runfiles.script};
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.env = script.env;
  options.env.push_back(absl::StrCat("NODE_PATH=", runfiles.node_modules));
  options.log_path = dir + "/node.log";
  ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child, ChildProcess::Start(options));
  absl::StatusOr<ExitStatus> exit = child->Wait(script.timeout);
  const std::string printed = ReadFile(options.log_path);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  if (!exit.ok()) {
    child->Stop(absl::Seconds(5));
    return absl::DeadlineExceededError(absl::StrCat(
        "node ", script.script, ": ", exit.status().message(), "; killed it:\n", printed));
  }
  if (!exit->ok()) {
    const std::string message = absl::StrCat("node ", script.script, " ", absl::StrJoin(args, " "),
                                             " ended with ", exit->ToString(), ":\n", printed);
    return exit->exit_code == 1 ? absl::InvalidArgumentError(message)
                                : absl::InternalError(message);
  }
  return printed;
}

}  // namespace pstrain
