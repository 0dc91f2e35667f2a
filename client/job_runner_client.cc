#include "client/job_runner_client.h"

#include <map>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/daemon/shutdown_signal.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace {

std::string FormatMetrics(const google::protobuf::Map<std::string, double>& metrics) {
  std::map<std::string, double> sorted(metrics.begin(), metrics.end());
  std::vector<std::string> parts;
  for (const auto& [name, value] : sorted) parts.push_back(absl::StrFormat("%s %.4f", name, value));
  return absl::StrJoin(parts, "  ");
}

std::string StepOf(int64_t step, int64_t max_steps) {
  return max_steps > 0 ? absl::StrCat(step, "/", max_steps) : absl::StrCat(step);
}

// `last_status` holds the status line printed last, so a repeated status
// (the coordinator re-sends it on every change of any field) prints once.
void PrintEvent(const JobEvent& event, int64_t max_steps, std::string* last_status,
                std::ostream& out) {
  if (event.has_progress()) {
    const ProgressEvent& progress = event.progress();
    out << absl::StrFormat("step %-12s loss %.4f  %8.0f examples/s\n",
                           StepOf(progress.global_step(), max_steps), progress.loss(),
                           progress.examples_per_sec());
  } else if (event.has_checkpoint()) {
    out << "checkpoint at step " << event.checkpoint().step() << ": " << event.checkpoint().path()
        << "\n";
  } else if (event.has_eval()) {
    out << "eval at step " << event.eval().checkpoint_step() << ": "
        << FormatMetrics(event.eval().metrics()) << (event.eval().is_best() ? "  (best)" : "")
        << "\n";
  } else if (event.has_status()) {
    std::string line = absl::StrCat(
        "job ", event.status().job_id(), ": ",
        JobState_Name(event.status().state()).substr(sizeof("JOB_STATE_") - 1),
        event.status().reason().empty() ? "" : absl::StrCat(" (", event.status().reason(), ")"));
    if (line != *last_status) out << line << "\n";
    *last_status = std::move(line);
  }
  out.flush();
}

}  // namespace

std::string FormatFinalStatus(const JobStatus& status) {
  std::string text = absl::StrCat("job ", status.job_id(), " ",
                                  JobState_Name(status.state()).substr(sizeof("JOB_STATE_") - 1),
                                  " at step ", status.global_step());
  if (!status.reason().empty()) absl::StrAppend(&text, ": ", status.reason());
  if (!status.last_eval_metrics().empty()) {
    absl::StrAppend(&text, "\nfinal evaluation (step ", status.last_eval_step(),
                    "): ", FormatMetrics(status.last_eval_metrics()));
  }
  absl::StrAppend(&text, "\ncheckpoints in ", status.spec().checkpoint().model_dir());
  if (!status.export_path().empty())
    absl::StrAppend(&text, "\nexported model: ", status.export_path());
  return text;
}

absl::StatusOr<JobStatus> RunJobAndFollow(const std::string& coordinator_address,
                                          const JobSpec& spec, absl::Duration deadline,
                                          std::ostream& out) {
  auto jobs = JobService::NewStub(
      grpc::CreateChannel(coordinator_address, grpc::InsecureChannelCredentials()));
  SubmitJobRequest submit;
  *submit.mutable_spec() = spec;
  SubmitJobResponse submitted;
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    absl::Status status = FromGrpcStatus(jobs->SubmitJob(&context, submit, &submitted));
    if (!status.ok()) return status;
  }
  const std::string job_id = submitted.job_id();
  const int64_t max_steps = submitted.status().spec().stop().max_steps();
  out << "submitted job " << job_id << "\n";

  // Ctrl-C stops the job the graceful way; the watch below then sees its
  // final checkpoint and evaluation through to the end.
  ShutdownSignal interrupt;
  std::thread stopper([&] {
    if (interrupt.Wait() == 0) return;  // the job ended on its own
    out << "stopping job " << job_id << " (final checkpoint first)...\n" << std::flush;
    StopJobRequest request;
    request.set_job_id(job_id);
    StopJobResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    jobs->StopJob(&context, request, &response);
  });

  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  WatchJobRequest watch;
  watch.set_job_id(job_id);
  watch.set_include_progress(true);
  auto stream = jobs->WatchJob(&context, watch);
  JobEvent event;
  std::string last_status;
  while (stream->Read(&event)) PrintEvent(event, max_steps, &last_status, out);
  absl::Status watched = FromGrpcStatus(stream->Finish());
  interrupt.RequestShutdown();
  stopper.join();
  if (!watched.ok()) return watched;

  GetJobRequest get;
  get.set_job_id(job_id);
  JobStatus final_status;
  grpc::ClientContext get_context;
  get_context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  absl::Status got = FromGrpcStatus(jobs->GetJob(&get_context, get, &final_status));
  if (!got.ok()) return got;
  return final_status;
}

}  // namespace pstrain
