#ifndef PSTRAIN_SERVER_COORDINATOR_TASK_NAME_H_
#define PSTRAIN_SERVER_COORDINATOR_TASK_NAME_H_

// How the coordinator names tasks in messages, logs and lease holders.

#include <cstdint>
#include <string>
#include <vector>

#include "protos/cluster.pb.h"

namespace pstrain {
namespace coordinator {

// "ps/1", "worker/0", as TF_CONFIG names roles.
std::string TaskName(const TaskId& task);

// "worker/0#7": one process (incarnation) of a task. Data leases, checkpoint
// leases and progress reports are keyed by it, so that the work of a process
// that restarted can be told from the work of its successor.
std::string HolderName(const TaskId& task, uint64_t incarnation);

// "ps/1, worker/0 and 3 more": at most four names, for a reason or a log
// line that says what a job waits for.
std::string TaskList(const std::vector<TaskId>& tasks);

// Task `index` of `type`.
TaskId MakeTask(TaskType type, int index);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TASK_NAME_H_
