#ifndef PSTRAIN_CLIENT_JOB_JSON_H_
#define PSTRAIN_CLIENT_JOB_JSON_H_

// What `--output json` prints: flat JSON objects a script can read with one
// lookup (`jq .accuracy`), one object per line.

#include <string>

#include "absl/time/time.h"
#include "protos/coordinator.pb.h"
#include "protos/job.pb.h"

namespace pstrain {

// {"job_id", "name", "state": "SUCCEEDED", "stop_reason", "reason",
//  "global_step", "examples_per_sec", "train_loss", "last_eval_step",
//  "model_dir", "export_path", "checkpoint_failures",
//  "last_checkpoint_failure", "eval_metrics": {...}} and every eval metric
// also as a top-level key ("accuracy", "loss", ...). The training loss is
// "train_loss" so it cannot be confused with an eval metric named "loss".
std::string JobStatusJson(const JobStatus& status);

// {"jobs": [JobStatusJson objects]}, newest first as the coordinator lists.
std::string JobListJson(const ListJobsResponse& jobs);

// {"running_job_id", "queued_jobs", "members": [{"role", "index", "address",
//  "incarnation", "state", "health", "health_detail", "heartbeat_age_secs",
//  "step", "queue_depth", "job_id", "metrics_address"}]}; the heartbeat age
// is taken at `now`.
std::string ClusterJson(const ClusterStatus& cluster, absl::Time now);

// One event of `pstrain watch`: {"event": "progress" | "checkpoint" |
// "checkpoint_failure" | "eval" | "status", "unix_ms", ...} with the event's
// fields at the top level (a status event's as in JobStatusJson).
std::string JobEventJson(const JobEvent& event);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_JOB_JSON_H_
