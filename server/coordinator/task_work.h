#ifndef PSTRAIN_SERVER_COORDINATOR_TASK_WORK_H_
#define PSTRAIN_SERVER_COORDINATOR_TASK_WORK_H_

// What one process holds in the running job, and handing it back when the
// process is lost (MembershipRegistry::CheckDeadlines) or replaced by a new
// incarnation (RegisterResult::replaced_incarnation), so that its data is
// trained on by others and its checkpoints may be deleted again.

#include <cstdint>
#include <string>

#include "common/job/retention_policy.h"
#include "protos/cluster.pb.h"
#include "server/coordinator/data_lease_manager.h"

namespace pstrain {
namespace coordinator {

// The running job's ledgers of who holds what. Borrowed; a null member is a
// ledger the job does not have (no training data in an eval job).
struct JobLedgers {
  DataLeaseManager* data = nullptr;
  RetentionPolicy* checkpoints = nullptr;
};

// Hands back everything `incarnation` of `task` holds: its data leases go to
// the front of the queue and its checkpoint leases are released. Safe to
// call more than once. Returns a line for the log, e.g. "worker/0#7 handed
// back 2 data leases and 1 checkpoint lease".
std::string HandBackWork(const TaskId& task, uint64_t incarnation, const JobLedgers& ledgers);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TASK_WORK_H_
