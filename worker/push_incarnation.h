#ifndef PSTRAIN_WORKER_PUSH_INCARNATION_H_
#define PSTRAIN_WORKER_PUSH_INCARNATION_H_

#include <cstdint>

#include "absl/time/time.h"

namespace pstrain {
namespace worker {

// The incarnation that numbers the pushes of one run of a job on this
// worker (PushId.incarnation). A shard keeps each worker's newest
// incarnation and refuses pushes of an older one as a restarted process's
// predecessor, and it restores the incarnations it knew from a checkpoint.
// So every run must number above every earlier one, also above the runs of
// this worker's earlier processes: the microseconds since the epoch at
// `now` in the high bits, `random` in the low 12 bits so that two runs
// started within the same microsecond still differ. Never 0.
uint64_t NewPushIncarnation(absl::Time now, uint64_t random);

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_PUSH_INCARNATION_H_
