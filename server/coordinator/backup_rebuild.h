#ifndef PSTRAIN_SERVER_COORDINATOR_BACKUP_REBUILD_H_
#define PSTRAIN_SERVER_COORDINATOR_BACKUP_REBUILD_H_

// A replicated shard that lost a replica goes on with one
// (job_failover.h). When a process is live again at the lost replica's
// address (restarted, or woken), the training loop rebuilds it as the
// shard's backup while training goes on: the process is set up as a
// backup under the shard's next epoch, the primary sends it a copy of its
// state and every decision after it, and once the backup has caught up it
// joins the chain and the shard survives another loss
// (docs/design/replicas.md).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "protos/parameter_server.pb.h"
#include "server/coordinator/job_parts.h"
#include "server/coordinator/started_job.h"

namespace pstrain {
namespace coordinator {

// Owned by the training loop, which calls Tend once a turn. Not
// thread-safe. Setting a backup up (its variables, which a large
// embedding table takes a while to initialise) runs on a thread of its
// own, so a slow or frozen process never holds up the loop's failovers
// and checkpoints; each turn asks the primary how far the backup is, one
// short call.
class BackupRebuilds {
 public:
  explicit BackupRebuilds(JobParts& parts);
  // A setup still running is left to finish on its own: its calls have
  // deadlines, and it touches nothing of the job.
  ~BackupRebuilds();

  BackupRebuilds(const BackupRebuilds&) = delete;
  BackupRebuilds& operator=(const BackupRebuilds&) = delete;

  // Moves each shard's rebuild on: a backup that caught up joins the chain
  // (JobStatus.backups_rebuilt); one lost meanwhile, refused, or not caught
  // up within backup_rebuild_timeout is given up (the primary goes on
  // alone, and a later turn tries again, waiting longer each time); a shard
  // without a backup whose other process is live at its address starts a
  // rebuild.
  void Tend(const StartedJob& job);

 private:
  // What a setup thread hands back; shared with it.
  struct Setup {
    absl::Mutex mu;
    // Null once the rebuilds are gone: nothing to wake.
    JobControl* control ABSL_GUARDED_BY(mu) = nullptr;
    // Set when the thread is done: OK, or why the setup failed.
    std::optional<absl::Status> result ABSL_GUARDED_BY(mu);
    int64_t state_bytes ABSL_GUARDED_BY(mu) = 0;
  };
  struct Attempt {
    bool active = false;
    uint64_t epoch = 0;
    // The process rebuilt, as it registered; ShardGroup's processes never
    // move.
    const ShardGroup::Shard* backup = nullptr;
    uint64_t incarnation = 0;
    absl::Time started;
    ReplicaSetup primary_setup;
    std::shared_ptr<Setup> setup;
    // When the next attempt may start, and the wait after a failure.
    absl::Time next_try = absl::InfinitePast();
    absl::Duration backoff = absl::Seconds(1);
  };

  void Start(int shard, uint64_t incarnation, const StartedJob& job);
  void Check(int shard, const StartedJob& job);
  // The backup caught up: it joins the chain.
  void Join(int shard, const StartedJob& job);
  // Gives the rebuild up; the primary goes on alone.
  void Abandon(int shard, const std::string& why);
  ChangeReplicaRequest ChangeRequest(const ReplicaSetup& setup) const;

  JobParts& parts_;
  std::vector<Attempt> attempts_;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_BACKUP_REBUILD_H_
