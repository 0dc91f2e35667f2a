#include "client/job_text.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/enum_names.h"

namespace pstrain {
namespace {

// "3m12s" for people; 0 or unset times print as "-".
std::string Age(int64_t unix_ms, absl::Time now) {
  if (unix_ms <= 0) return "-";
  const absl::Duration age = absl::Floor(now - absl::FromUnixMillis(unix_ms), absl::Seconds(1));
  // FormatDuration writes zero as "0", which reads like a missing unit.
  if (age <= absl::ZeroDuration()) return "0s";
  return absl::FormatDuration(age);
}

std::string StepOf(const JobStatus& status) {
  const int64_t max_steps = status.spec().stop().max_steps();
  return max_steps > 0 ? absl::StrCat(status.global_step(), "/", max_steps)
                       : absl::StrCat(status.global_step());
}

}  // namespace

std::string FormatMetrics(const google::protobuf::Map<std::string, double>& metrics) {
  std::map<std::string, double> sorted(metrics.begin(), metrics.end());
  std::vector<std::string> parts;
  for (const auto& [name, value] : sorted) parts.push_back(absl::StrFormat("%s %.4f", name, value));
  return absl::StrJoin(parts, "  ");
}

std::string FormatCheckpointFailure(const CheckpointFailure& failure) {
  std::string text = absl::StrCat(failure.final() ? "final checkpoint" : "checkpoint", " at step ",
                                  failure.step(), " failed (", failure.consecutive_failures(),
                                  " in a row");
  if (failure.final()) {
    absl::StrAppend(&text, "; the job fails");
  } else if (failure.max_consecutive_failures() > 0) {
    absl::StrAppend(&text, "; the job fails at ", failure.max_consecutive_failures());
  }
  absl::StrAppend(&text, "): ", failure.message());
  return text;
}

std::string FormatFinalStatus(const JobStatus& status) {
  std::string text = absl::StrCat("job ", status.job_id(), " ", JobStateName(status.state()),
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

std::string FormatJobStatus(const JobStatus& status, absl::Time now) {
  std::vector<std::pair<std::string, std::string>> rows = {
      {"job", status.job_id()},
      {"name", status.name()},
      {"state", JobStateName(status.state())},
  };
  if (!status.reason().empty()) rows.push_back({"reason", status.reason()});
  rows.push_back({"step", StepOf(status)});
  if (status.examples_per_sec() > 0) {
    rows.push_back({"examples/s", absl::StrFormat("%.0f", status.examples_per_sec())});
  }
  // A job resumed at a checkpoint that already met its stop trained no
  // step: it has no training loss to show.
  const bool trained = status.global_step() > status.resumed_from_step();
  if (trained) rows.push_back({"train loss", absl::StrFormat("%.4f", status.loss())});
  if (!status.resumed_from().empty()) {
    rows.push_back({"resumed from", absl::StrCat(status.resumed_from(), " (step ",
                                                 status.resumed_from_step(), ")")});
  }
  if (status.rollbacks() > 0) {
    rows.push_back(
        {"rollbacks", absl::StrCat(status.rollbacks(), "; last: ", status.last_rollback())});
  }
  if (status.failovers() > 0) {
    rows.push_back(
        {"failovers", absl::StrCat(status.failovers(), "; last: ", status.last_failover())});
  }
  if (status.backups_rebuilt() > 0) {
    rows.push_back({"rebuilt", absl::StrCat(status.backups_rebuilt(), "; last: ",
                                            status.last_backup_rebuilt())});
  }
  if (status.checkpoint_failures() > 0) {
    rows.push_back({"failed ckpts", absl::StrCat(status.checkpoint_failures(), "; last: ",
                                                 status.last_checkpoint_failure())});
  }
  if (!status.last_eval_metrics().empty()) {
    rows.push_back({absl::StrCat("eval (step ", status.last_eval_step(), ")"),
                    FormatMetrics(status.last_eval_metrics())});
  }
  rows.push_back({"submitted", absl::StrCat(Age(status.submit_unix_ms(), now), " ago")});
  if (status.end_unix_ms() > 0 && status.start_unix_ms() > 0) {
    rows.push_back(
        {"ran for",
         absl::StrFormat("%.1fs", (status.end_unix_ms() - status.start_unix_ms()) / 1000.0)});
  }
  rows.push_back({"model_dir", status.spec().checkpoint().model_dir()});
  if (!status.checkpoints().empty()) {
    rows.push_back({"checkpoints", absl::StrCat(status.checkpoints_size(), ", newest ",
                                                status.checkpoints().rbegin()->path())});
  }
  if (!status.export_path().empty()) rows.push_back({"exported", status.export_path()});
  std::string text;
  for (const auto& [label, value] : rows) absl::StrAppendFormat(&text, "%-16s %s\n", label, value);
  return text;
}

std::string FormatJobTable(const ListJobsResponse& jobs) {
  if (jobs.jobs().empty()) return "no jobs\n";
  std::string text = absl::StrFormat("%-28s %-10s %-14s %-12s %s\n", "JOB", "STATE", "STEP",
                                     "EXAMPLES/S", "LAST EVAL");
  for (const JobStatus& job : jobs.jobs()) {
    absl::StrAppendFormat(&text, "%-28s %-10s %-14s %-12.0f %s\n", job.job_id(),
                          JobStateName(job.state()), StepOf(job), job.examples_per_sec(),
                          FormatMetrics(job.last_eval_metrics()));
  }
  return text;
}

std::string FormatClusterTable(const ClusterStatus& cluster, absl::Time now) {
  std::string text = absl::StrCat(
      "running job: ", cluster.running_job_id().empty() ? "none" : cluster.running_job_id(),
      "; queued jobs: ", cluster.queued_jobs(), "\n");
  absl::StrAppendFormat(&text, "%-14s %-22s %-20s %-6s %-9s %-8s %-6s %s\n", "MEMBER", "ADDRESS",
                        "INCARNATION", "STATE", "HEARTBEAT", "STEP", "QUEUE", "HEALTH");
  for (const Member& member : cluster.members()) {
    std::string health = MemberHealthName(member.health());
    if (!member.health_detail().empty()) absl::StrAppend(&health, ": ", member.health_detail());
    absl::StrAppendFormat(
        &text, "%-14s %-22s %-20d %-6s %-9s %-8d %-6d %s\n",
        absl::StrCat(TaskRoleName(member.task().type()), "/", member.task().index()),
        member.address().empty() ? "-" : member.address(), member.incarnation(),
        MemberStateName(member.state()),
        absl::StrCat(Age(member.last_heartbeat_unix_ms(), now), " ago"), member.step(),
        member.queue_depth(), health);
  }
  if (cluster.members().empty()) absl::StrAppend(&text, "(no members registered)\n");
  return text;
}

}  // namespace pstrain
