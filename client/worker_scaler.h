#ifndef PSTRAIN_CLIENT_WORKER_SCALER_H_
#define PSTRAIN_CLIENT_WORKER_SCALER_H_

#include <functional>
#include <string>

#include "client/local_cluster.h"
#include "client/scale_inbox.h"
#include "client/scale_request.h"

namespace pstrain {

// Brings `cluster` to request.workers workers, one at a time: adds the next
// worker index while there are too few, removes the highest while there
// are too many (LocalCluster::AddWorker, RemoveWorker), stopping at the
// first change that fails. Each change is announced (one line for people:
// "worker/2 joined: ...", "worker/1 left: SIGTERM, ...") and listed in the
// answer. The number of parameter servers never changes: every worker and
// checkpoint is sharded over the ones the cluster started with.
ScaleAnswer ScaleWorkers(LocalCluster& cluster, const ScaleRequest& request,
                         const std::function<void(const std::string&)>& announce);

// Takes every request waiting in `inbox`, carries it out on `cluster`
// (ScaleWorkers) and answers it; one that cannot be read is answered with
// why. A line announces each request and its outcome.
void AnswerScaleRequests(LocalCluster& cluster, ScaleInbox& inbox,
                         const std::function<void(const std::string&)>& announce);

}  // namespace pstrain

#endif  // PSTRAIN_CLIENT_WORKER_SCALER_H_
