#include "client/submit_command.h"

#include <iostream>

#include "client/enum_names.h"
#include "client/exit_code.h"
#include "client/job_json.h"
#include "client/job_spec_file.h"
#include "client/remote_command.h"
#include "gflags/gflags.h"

DEFINE_string(request_id, "",
              "submit: the submit's id (1 to 128 printable characters): a submit sent again "
              "with the id of a job the coordinator knows returns that job instead of queueing "
              "another (default: a random id, kept for the command's own retries)");

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
  ApplyModelDirFlag(*spec);

  SubmitJobRequest request;
  *request.mutable_spec() = *std::move(spec);
  request.set_request_id(FLAGS_request_id);
  absl::StatusOr<SubmitJobResponse> submitted = remote->client->Submit(request);
  if (!submitted.ok()) return ReportFailure("submit", submitted.status());
  JobStatus status = submitted->status();
  status.set_job_id(submitted->job_id());
  if (remote->output.format == OutputFormat::kJson) {
    std::cout << JobStatusJson(status) << "\n";
  } else if (submitted->already_submitted()) {
    std::cout << "job " << submitted->job_id() << " was submitted before with request id "
              << FLAGS_request_id << "; nothing new was queued (it is "
              << JobStateName(status.state()) << ")\nfollow it with: pstrain watch "
              << submitted->job_id() << "\n";
  } else {
    std::cout << "submitted job " << submitted->job_id() << " to " << remote->client->address()
              << "\nfollow it with: pstrain watch " << submitted->job_id() << "\n";
  }
  return kExitSuccess;
}

int RunValidate(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << "pstrain validate: expected one job spec file (.pbtxt or .json), got "
              << args.size() << " arguments (see pstrain validate --help)\n";
    return kExitUsage;
  }
  int exit_code = kExitSuccess;
  std::optional<RemoteCommand> remote = SetUpRemoteCommand("validate", &exit_code);
  if (!remote) return exit_code;
  absl::StatusOr<JobSpec> spec = LoadCheckedJobSpec(args[0]);
  if (!spec.ok()) return ReportFailure("validate", spec.status());
  ApplyModelDirFlag(*spec);
  SubmitJobRequest request;
  *request.mutable_spec() = *std::move(spec);
  request.set_validate_only(true);
  absl::StatusOr<SubmitJobResponse> checked = remote->client->Submit(request);
  if (!checked.ok()) return ReportFailure("validate", checked.status());
  if (remote->output.format == OutputFormat::kJson) {
    std::cout << JobStatusJson(checked->status()) << "\n";
  } else {
    std::cout << args[0] << ": the coordinator at " << remote->client->address()
              << " would run this job; nothing was queued. With its defaults filled in:\n"
              << checked->status().spec().DebugString();
  }
  return kExitSuccess;
}

}  // namespace

Subcommand SubmitCommand() {
  return {"submit",
          "JOB.pbtxt",
          "queue a job on a running cluster and print its id",
          "Reads the job spec (text format .pbtxt, or .json), checks it, and queues it on\n"
          "the coordinator, which answers at once: the job reads its data when it starts.\n"
          "Prints the job id; `pstrain watch ID` follows it. An invalid spec is refused\n"
          "before anything is sent, naming the field (exit code 2), and so are data files\n"
          "that are not there. What needs the data read (a bad record, a job over the\n"
          "coordinator's per-job limits) fails the job as it starts, with the reason in\n"
          "`pstrain status`; `pstrain validate` checks all of it first. A full queue is\n"
          "refused with exit code 4: submit again once a queued job has started.\n"
          "Each submit carries a request id (--request_id, default random): sent again\n"
          "after a lost answer, it returns the job queued the first time, never a second.\n"
          "\n"
          "Example:\n"
          "  pstrain submit examples/fashion_mnist_mlp.pbtxt --coordinator_address=localhost:7070",
          RemoteCommandFlags({"output", "request_id", "model_dir"}),
          RunSubmit};
}

Subcommand ValidateCommand() {
  return {"validate",
          "JOB.pbtxt",
          "check a job as the coordinator would run it, queueing nothing",
          "Sends the job spec to the coordinator, which checks everything its start would:\n"
          "the spec, the paths, the data (read whole, as the job would), the model built\n"
          "on it and the per-job limits. Prints the spec with its defaults filled in and\n"
          "exits 0, or the first problem with exit code 2. Nothing is queued or changed.\n"
          "\n"
          "Example:\n"
          "  pstrain validate examples/fashion_mnist_mlp.pbtxt",
          RemoteCommandFlags({"output", "model_dir"}),
          RunValidate};
}

}  // namespace pstrain
