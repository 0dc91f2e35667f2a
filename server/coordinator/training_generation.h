#ifndef PSTRAIN_SERVER_COORDINATOR_TRAINING_GENERATION_H_
#define PSTRAIN_SERVER_COORDINATOR_TRAINING_GENERATION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock/clock.h"
#include "protos/cluster.pb.h"
#include "server/coordinator/shard_group.h"

namespace pstrain {
namespace coordinator {

// A process of a replicated shard that the run lost (docs/design/replicas.md).
struct LostReplica {
  TaskId task;
  std::string why;
};

// The run of a training job's variables on its parameter servers: the
// shards, the process incarnation of each that the run lives in, and the
// generation number that workers tag their reports with
// (Assignment.generation). Losing one of those processes voids the run
// until every shard starts a new generation from the newest checkpoint
// (the rollback, job_rollback.h). Thread-safe.
class TrainingGeneration {
 public:
  explicit TrainingGeneration(Clock& clock) : clock_(clock) {}

  TrainingGeneration(const TrainingGeneration&) = delete;
  TrainingGeneration& operator=(const TrainingGeneration&) = delete;

  // The shards the job placed its variables on, with the incarnation of
  // each one's process; starts the first generation. Once. Their calls are
  // cancelled at once when CancelAll came first.
  void Connect(std::shared_ptr<ShardGroup> shards, std::vector<uint64_t> incarnations);
  // Null before Connect.
  std::shared_ptr<ShardGroup> shards() const;
  // The current generation; 0 before Connect.
  uint64_t number() const { return number_.load(); }

  // A new generation on the shards' processes `incarnations`, above every
  // earlier one, also those of an earlier coordinator process (microseconds
  // since the epoch). The loss that caused it is dealt with: a loss of the
  // new processes is another.
  void Renew(std::vector<uint64_t> incarnations);
  // A new run on the same processes (the job's sync slots are dealt
  // again): a new number; a loss already marked stands, for the rollback
  // that follows.
  void Advance();

  // Whether losing process `incarnation` of shard `index` costs the run:
  // it is one the run lives in (any, before Connect), and the final
  // checkpoint is not saved yet.
  bool Loses(int index, uint64_t incarnation) const;
  // The run lives in process `incarnation` of ps task `index` from now
  // on: a backup rebuilt there while the run goes on.
  void Adopt(int index, uint64_t incarnation);
  // A loss that costs the run, with why; the first one until Renew stands.
  void MarkLost(std::string why);
  std::optional<std::string> lost() const;
  // With replicas: a lost process of the run, whose shard the training
  // loop fails over (job_failover.h) instead of rolling back.
  void MarkReplicaLost(LostReplica replica);
  // The replica losses marked since the last call (Renew forgets them).
  std::vector<LostReplica> TakeLostReplicas();
  // The final checkpoint is saved: losing a shard no longer matters.
  void MarkDone();

  // The coordinator shuts down: cancels every shard call in progress and
  // to come, also of shards connected later.
  void CancelAll();

 private:
  uint64_t Next() const;

  Clock& clock_;
  std::atomic<uint64_t> number_{0};

  mutable absl::Mutex mu_;
  std::shared_ptr<ShardGroup> shards_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> incarnations_ ABSL_GUARDED_BY(mu_);
  std::optional<std::string> lost_ ABSL_GUARDED_BY(mu_);
  std::vector<LostReplica> lost_replicas_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_TRAINING_GENERATION_H_
