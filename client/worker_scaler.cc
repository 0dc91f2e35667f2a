#include "client/worker_scaler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pstrain {
namespace {

std::string Seconds(absl::Duration duration) {
  return absl::StrFormat("%.1f s", absl::ToDoubleSeconds(duration));
}

std::string DescribeRemoval(const RemovedWorker& removed, absl::Duration grace) {
  const LocalTask& task = removed.task;
  std::string line = absl::StrCat(task.name(), " (pid ", task.pid, ") left: SIGTERM, ");
  if (removed.killed_after_grace) {
    absl::StrAppend(&line, "still running after the ", Seconds(grace), " grace; SIGKILL, ");
  }
  absl::StrAppend(&line, removed.exit.ToString(), " after ", Seconds(removed.took), "; log ",
                  task.log_path);
  return line;
}

}  // namespace

ScaleAnswer ScaleWorkers(LocalCluster& cluster, const ScaleRequest& request,
                         const std::function<void(const std::string&)>& announce) {
  ScaleAnswer answer;
  auto record = [&](std::string line) {
    announce(line);
    answer.changes.push_back(std::move(line));
  };
  answer.result = CheckScaleRequest(request);
  while (answer.result.ok() && cluster.num_workers() < request.workers) {
    absl::StatusOr<LocalTask> added = cluster.AddWorker();
    if (!added.ok()) {
      answer.result = added.status();
      break;
    }
    record(absl::StrCat(added->name(), " joined: started (pid ", added->pid, ") at ",
                        added->grpc_address, "; log ", added->log_path));
  }
  while (answer.result.ok() && cluster.num_workers() > request.workers) {
    absl::StatusOr<RemovedWorker> removed = cluster.RemoveWorker(request.grace);
    if (!removed.ok()) {
      answer.result = removed.status();
      break;
    }
    record(DescribeRemoval(*removed, request.grace));
  }
  answer.workers = cluster.num_workers();
  return answer;
}

void AnswerScaleRequests(LocalCluster& cluster, ScaleInbox& inbox,
                         const std::function<void(const std::string&)>& announce) {
  for (const ScaleInbox::Received& received : inbox.Take()) {
    const std::string from = absl::StrCat("pstrain scale (pid ", received.requester, ")");
    ScaleAnswer answer;
    if (received.request.ok()) {
      announce(absl::StrCat(from, " asks for ", received.request->workers, " worker(s); ",
                            cluster.num_workers(), " run now"));
      answer = ScaleWorkers(cluster, *received.request, announce);
    } else {
      answer.result = received.request.status();
      answer.workers = cluster.num_workers();
    }
    announce(answer.result.ok()
                 ? absl::StrCat(answer.workers, " worker(s) now")
                 : absl::StrCat("the request of ", from, " failed: ", answer.result.message(), "; ",
                                answer.workers, " worker(s) now"));
    if (absl::Status answered = inbox.Answer(received.requester, answer); !answered.ok()) {
      announce(absl::StrCat("cannot answer ", from, ": ", answered.message()));
    }
  }
}

}  // namespace pstrain
