#ifndef PSTRAIN_CLIENT_TASK_LOGS_H_
#define PSTRAIN_CLIENT_TASK_LOGS_H_

// The logs a local cluster keeps in its run folder: `pstrain local` sends
// each process's stdout and stderr (glog's lines) to
// <run_dir>/<role>-<index>.log, one file per task for the life of the
// cluster, a restarted process going on below a marker (LocalCluster).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/checkpoint/env.h"

namespace pstrain {

struct TaskLogFile {
  std::string task;  // "worker/0", as LocalTask::name() says it
  std::string path;  // "<run_dir>/worker-0.log"
};

// The task logs in `run_dir`, in the order of a cluster's tasks:
// coordinator, parameter servers, workers, evaluator, each by index.
// NotFound: the folder does not exist or holds no task log (it is no run
// folder of `pstrain local`). Other errors of the Env.
absl::StatusOr<std::vector<TaskLogFile>> ListTaskLogs(Env& env, const std::string& run_dir);

// The log of `task` ("worker/0"; "coordinator" and "evaluator" alone mean
// index 0) among `logs`; all of them when `task` is empty.
// NotFound: no such task, naming the tasks there are.
absl::StatusOr<std::vector<TaskLogFile>> SelectTaskLogs(const std::vector<TaskLogFile>& logs,
                                                        const std::string& task);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_TASK_LOGS_H_
