#ifndef PSTRAIN_SERVER_COORDINATOR_SUMMARY_EVENTS_H_
#define PSTRAIN_SERVER_COORDINATOR_SUMMARY_EVENTS_H_

#include <string>
#include <vector>

#include "common/checkpoint/env.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace coordinator {

// A job's curves as JobEvents, read back from what its summaries wrote
// under its model_dir (train/scalars.jsonl and eval/scalars.jsonl,
// common/job/train_summaries.h): for a job whose events this coordinator
// does not hold, because it restarted since the job ran. A progress event
// per training step written (loss, learning rate, examples/s), an eval
// event per evaluation (its metrics), in step order, each at the time it
// was written. No files: no events. A file that cannot be read is skipped
// (logged); a half-written last line is ignored.
std::vector<JobEvent> EventsFromSummaries(Env& env, const std::string& model_dir);

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_SUMMARY_EVENTS_H_
