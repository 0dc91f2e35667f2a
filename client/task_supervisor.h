#ifndef PSTRAIN_CLIENT_TASK_SUPERVISOR_H_
#define PSTRAIN_CLIENT_TASK_SUPERVISOR_H_

#include <functional>
#include <optional>
#include <string>

#include "client/local_cluster.h"
#include "client/restart_policy.h"
#include "client/scale_inbox.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"

namespace pstrain {

// A process of a local cluster that ended and was not started again.
struct GivenUpTask {
  TaskExit exit;
  // Why it was not: RestartPolicy::OnExit's message ("it was restarted 5
  // times within 10m, the most --max_restarts=5 allows").
  std::string why;
};

// Watches the processes of `cluster` (polling each a few times a second)
// and starts again, on the same addresses and flags, each one that ends as
// far as `policy` allows, until `stop` is set (nullopt) or a process ends
// that the policy does not restart (returned). Each restart is announced
// through `announce`, one line for people: the task, how it ended, the
// restart's number and its log; its log file keeps the earlier run's lines
// above a marker. Waits (polls and the policy's pauses) are on `stop`, so
// setting it ends the watch at once, except during a restart, which may take
// up to the cluster's start_timeout. The calling thread must be the only one
// using `cluster` meanwhile.
// With an `inbox`, each check also carries out the scale requests waiting
// there (AnswerScaleRequests), one worker at a time; a worker removed that
// way is no task of the cluster any more, so it is never restarted.
std::optional<GivenUpTask> SuperviseTasks(LocalCluster& cluster, RestartPolicy& policy,
                                          Clock& clock, const StopSignal& stop,
                                          const std::function<void(const std::string&)>& announce,
                                          ScaleInbox* inbox = nullptr);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_TASK_SUPERVISOR_H_
