#ifndef PSTRAIN_COMMON_CLUSTER_MEMBER_REFUSAL_H_
#define PSTRAIN_COMMON_CLUSTER_MEMBER_REFUSAL_H_

// The one policy by which every cluster member (parameter server, worker,
// evaluator) treats the coordinator's refusal of its registration and of
// its request for work (Register and GetAssignment in
// protos/coordinator.proto). A final refusal ends the member's life; any
// other is for now, and the member asks again after a pause.

#include "absl/status/status.h"

namespace pstrain {

// Final:
//   FailedPrecondition PROCESS_REPLACED: a newer process of this task
//     registered; this one is stale and should exit.
//   InvalidArgument: the coordinator refuses the task or the request as it
//     is (a misconfigured process); asking again cannot help.
//   Cancelled: the member's session was cancelled (the process stops).
// For now, everything else, among which:
//   DeadlineExceeded / Unavailable: the coordinator stayed unreachable past
//     the retry deadline, or is stopping; it may come back.
//   AlreadyExists: another live process holds this task index; it is freed
//     once that process's heartbeats lapse (a process restarted at another
//     address).
//   NotFound / Aborted MEMBER_UNKNOWN, MEMBER_LOST, STALE_INCARNATION: the
//     coordinator forgot this member; registering again fixes it.
bool IsFinalRefusal(const absl::Status& status);

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLUSTER_MEMBER_REFUSAL_H_
