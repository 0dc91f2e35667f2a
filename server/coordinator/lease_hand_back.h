#ifndef PSTRAIN_SERVER_COORDINATOR_LEASE_HAND_BACK_H_
#define PSTRAIN_SERVER_COORDINATOR_LEASE_HAND_BACK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "protos/coordinator.pb.h"
#include "server/coordinator/applied_records.h"
#include "server/coordinator/data_lease_manager.h"
#include "server/coordinator/job_control.h"
#include "server/coordinator/training_generation.h"

namespace pstrain {
namespace coordinator {

// A data lease whose worker was lost, or does not know what became of a
// push, goes back without the records the shards applied pushes of, so
// that they are trained neither twice nor not at all. What was applied is
// read from every shard's push ledger, sealed while read: a push of those
// leases still on its way (a frozen or cut-off worker's, which the
// membership deadline did not stop yet) is refused from then on, so the
// records read stay all that was applied. Not for sync slots' leases,
// which wait whole for the slot's next holder. Thread-safe.
class LeaseHandBack {
 public:
  // `generation` and `control` are borrowed and outlive it.
  LeaseHandBack(std::string job_id, const TrainingGeneration& generation,
                const JobControl& control);

  // `holder` is gone: each of its leases goes back without the records its
  // applied pushes trained, which count as finished. Returns a note for
  // the log ("N records of M data leases were trained by its applied
  // pushes and count as finished; "), empty when nothing was trained.
  std::string ReturnUntrained(DataLeaseManager& data, const std::string& holder) const;

  // CompleteDataLease of `lease_id` with a push of unknown outcome: the
  // records the ledgers do not show applied go back to the queue.
  // FailedPrecondition RUN_ROLLED_BACK: the job is rolling back (the lease
  // is void). A lease unknown to `data`: its refusal.
  absl::Status CompleteUnknownOutcome(DataLeaseManager& data, const std::string& holder,
                                      int64_t lease_id) const;

 private:
  // The records the shards applied pushes of, for each of `leases`, merged;
  // nullopt while the job neither trains nor finishes (a rollback voids the
  // leases). A shard that does not answer is left out, with a warning: what
  // only it applied is trained again there, the least harm without its
  // answer.
  std::optional<AppliedRecords> ReadApplied(const std::vector<DataLease>& leases,
                                            const std::string& holder) const;

  const std::string job_id_;
  const TrainingGeneration& generation_;
  const JobControl& control_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_LEASE_HAND_BACK_H_
