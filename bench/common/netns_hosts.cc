#include "bench/common/netns_hosts.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/process/child_process.h"

namespace pstrain {

absl::Status NetnsHosts::Run(const std::string& command,
                             const std::vector<std::string>& args) const {
  ChildProcessOptions options;
  options.program = script_;
  options.args = {command, prefix_};
  options.args.insert(options.args.end(), args.begin(), args.end());
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(options);
  if (!child.ok()) return child.status();
  absl::StatusOr<ExitStatus> exit = (*child)->Wait(absl::Minutes(1));
  if (!exit.ok()) return exit.status();
  if (!exit->ok()) {
    return absl::InternalError(
        absl::StrCat(script_, " ", absl::StrJoin(options.args, " "), ": ", exit->ToString()));
  }
  return absl::OkStatus();
}

std::map<std::string, TaskHost> NetnsHosts::OnePerHost(int num_ps, int num_workers) const {
  std::map<std::string, std::string> host_of = {{"coordinator/0", "chief-0"},
                                                {"evaluator/0", "evaluator-0"}};
  for (int i = 0; i < num_ps; ++i) host_of[absl::StrCat("ps/", i)] = absl::StrCat("ps-", i);
  for (int i = 0; i < num_workers; ++i) {
    host_of[absl::StrCat("worker/", i)] = absl::StrCat("worker-", i);
  }
  std::map<std::string, TaskHost> placement;
  for (const auto& [task, host] : host_of) {
    placement[task] = {{script_, "exec", prefix_, host},
                       absl::StrCat("pstrain-", host, ".pstrain.svc")};
  }
  return placement;
}

}  // namespace pstrain
