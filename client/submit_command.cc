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

// A SubmitJob call of a command: its connection, its answer, and the exit
// code when there is no answer (said on stderr).
struct Sent {
  std::optional<RemoteCommand> remote;
  absl::StatusOr<SubmitJobResponse> response = absl::UnknownError("not sent");
  int exit_code = kExitSuccess;
};

// Sends the job spec file `args` names (one, --model_dir applied) in
// `request` for `command` (submit, validate).
Sent SendSpec(absl::string_view command, const std::vector<std::string>& args,
              SubmitJobRequest request) {
  Sent sent;
  if (args.size() != 1) {
    std::cerr << "pstrain " << command << ": expected one job spec file (.pbtxt or .json), got "
              << args.size() << " arguments (see pstrain " << command << " --help)\n";
    sent.exit_code = kExitUsage;
    return sent;
  }
  sent.remote = SetUpRemoteCommand(command, &sent.exit_code);
  if (!sent.remote) return sent;
  absl::StatusOr<JobSpec> spec = LoadCheckedJobSpec(args[0]);
  if (!spec.ok()) {
    sent.exit_code = ReportFailure(command, spec.status());
    return sent;
  }
  ApplyModelDirFlag(*spec);
  *request.mutable_spec() = *std::move(spec);
  sent.response = sent.remote->client->Submit(request);
  if (!sent.response.ok()) sent.exit_code = ReportFailure(command, sent.response.status());
  return sent;
}

int RunSubmit(const std::vector<std::string>& args) {
  SubmitJobRequest request;
  request.set_request_id(FLAGS_request_id);
  Sent sent = SendSpec("submit", args, std::move(request));
  if (!sent.response.ok()) return sent.exit_code;
  const std::optional<RemoteCommand>& remote = sent.remote;
  const SubmitJobResponse& submitted = *sent.response;
  JobStatus status = submitted.status();
  status.set_job_id(submitted.job_id());
  if (remote->output.format == OutputFormat::kJson) {
    std::cout << JobStatusJson(status) << "\n";
  } else if (submitted.already_submitted()) {
    std::cout << "job " << submitted.job_id() << " was submitted before with request id "
              << status.request_id() << "; nothing new was queued (it is "
              << JobStateName(status.state()) << ")\nfollow it with: pstrain watch "
              << submitted.job_id() << "\n";
  } else {
    std::cout << "submitted job " << submitted.job_id() << " to " << remote->client->address()
              << "\nfollow it with: pstrain watch " << submitted.job_id() << "\n";
  }
  return kExitSuccess;
}

int RunValidate(const std::vector<std::string>& args) {
  SubmitJobRequest request;
  request.set_validate_only(true);
  Sent sent = SendSpec("validate", args, std::move(request));
  if (!sent.response.ok()) return sent.exit_code;
  const std::optional<RemoteCommand>& remote = sent.remote;
  const SubmitJobResponse& checked = *sent.response;
  if (remote->output.format == OutputFormat::kJson) {
    std::cout << JobStatusJson(checked.status()) << "\n";
  } else {
    std::cout << args[0] << ": the coordinator at " << remote->client->address()
              << " would run this job; nothing was queued. With its defaults filled in:\n"
              << checked.status().spec().DebugString();
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
