#include "client/submit_command.h"

#include <iostream>

#include "client/exit_code.h"
#include "client/job_json.h"
#include "client/job_spec_file.h"
#include "client/remote_command.h"

namespace pstrain {
namespace {

int RunSubmit(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain submit: expected one job spec file (.pbtxt or .json), got " << args.size()
              << " arguments (see pstrain submit --help)\n";
    return kExitUsage;
  }
  int exit_code = kExitSuccess;
  std::optional<RemoteCommand> remote = SetUpRemoteCommand("submit", &exit_code);
  if (!remote) return exit_code;
  absl::StatusOr<JobSpec> spec = LoadCheckedJobSpec(args[0]);
  if (!spec.ok()) return ReportFailure("submit", spec.status());

  SubmitJobRequest request;
  *request.mutable_spec() = *std::move(spec);
  absl::StatusOr<SubmitJobResponse> submitted = remote->client->Submit(request);
  if (!submitted.ok()) return ReportFailure("submit", submitted.status());
  JobStatus status = submitted->status();
  status.set_job_id(submitted->job_id());
  if (remote->output.format == OutputFormat::kJson) {
    std::cout << JobStatusJson(status) << "\n";
  } else {
    std::cout << "submitted job " << submitted->job_id() << " to " << remote->client->address()
              << "\nfollow it with: pstrain watch " << submitted->job_id() << "\n";
  }
  return kExitSuccess;
}

}  // namespace

Subcommand SubmitCommand() {
  return {"submit",
          "JOB.pbtxt",
          "queue a job on a running cluster and print its id",
          "Reads the job spec (text format .pbtxt, or .json), checks it, and queues it on\n"
          "the coordinator. Prints the job id; `pstrain watch ID` follows it. An invalid\n"
          "spec is refused before anything is sent, naming the field (exit code 2); so is\n"
          "a job over the coordinator's per-job limits (variables, dense parameters,\n"
          "embedding tables), naming the limit and its flag. A full queue is refused with\n"
          "exit code 4: submit again once a queued job has started.\n"
          "\n"
          "Example:\n"
          "  pstrain submit examples/fashion_mnist_mlp.pbtxt --coordinator_address=localhost:7070",
          RemoteCommandFlags({"output"}),
          RunSubmit};
}

}  // namespace pstrain
