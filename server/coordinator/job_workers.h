#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_WORKERS_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_WORKERS_H_

#include <set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "protos/cluster.pb.h"
#include "protos/coordinator.pb.h"
#include "server/coordinator/assignment_board.h"

namespace pstrain {
namespace coordinator {

// What Join did with a worker that registered while its job runs.
enum class WorkerJoin {
  kJoined,        // handed the job's assignment now, as rank task.index()
  kAlreadyIn,     // it holds an assignment of the job already
  kAtABoundary,   // the job's rounds have a slot per worker: it joins when
                  // they are dealt again for it (job_resize.h)
  kBeyondLimit,   // its index is at or past the job's max_workers
  kNotYet,        // nothing published yet: it joins when the job is (the
                  // job is starting)
};

// Which worker ranks a running job trains on, and the assignment each is
// handed (docs/design/elastic_workers.md). The start phase, each rollback
// and each change of a fixed count publish the job's worker assignment. An
// elastic job hands it to ranks [0, count), every worker present, and every
// rank that ever joined; a worker that registers while it trains joins at
// once as rank = its task index, up to max_workers ranks, and a rank stays
// in the job once it joined (a process that takes the task up again
// continues from its assignment). A job whose sync rounds have a slot per
// worker (RoundsHaveWorkerSlots) is not elastic: its data is dealt to
// ranks [0, count) exactly, and its count changes only when the slots are
// dealt again at a round boundary (ChangeCount). Thread-safe.
class JobWorkers {
 public:
  // `board` is borrowed and outlives this.
  explicit JobWorkers(AssignmentBoard& board) : board_(board) {}

  JobWorkers(const JobWorkers&) = delete;
  JobWorkers& operator=(const JobWorkers&) = delete;

  // The job starts on ranks [0, count); an `elastic` one takes workers up
  // to max_workers ranks. Once, before Publish.
  void Plan(int count, int max_workers, bool elastic);
  // A job that is not elastic: its slots are dealt again for `count`
  // workers; the next Publish hands its assignment to ranks [0, count) and
  // takes it back from the ranks above.
  void ChangeCount(int count);

  // From now on the job's workers get `base` (its worker_rank set to each
  // one's index) and hands it out as the class comment says, joining the
  // ranks in `present` and those that called Join before. Returns the
  // ranks handed it, ascending.
  std::vector<int> Publish(const Assignment& base, const std::vector<int>& present);

  // Worker `task` registered (a new process, or one that restarted): hands
  // it the job's assignment if it may join now (WorkerJoin says why not).
  WorkerJoin Join(const TaskId& task);

  // Every rank handed the job's assignment, ascending.
  std::vector<int> Ranks() const;
  // The ranks the job waits for: [0, count()).
  int count() const;
  // One past the highest rank a worker may join as.
  int max_workers() const;

 private:
  // Sets `rank`'s assignment on the board: the job's, or none.
  void HandLocked(int rank, bool in_job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  AssignmentBoard& board_;

  // Held while the board is set, so that a join cannot hand out the
  // assignment of a run that a rollback has just replaced.
  mutable absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  int max_workers_ ABSL_GUARDED_BY(mu_) = 0;
  bool elastic_ ABSL_GUARDED_BY(mu_) = false;
  bool published_ ABSL_GUARDED_BY(mu_) = false;
  // The published assignment less its spec and placements, which every
  // rank shares in job_wide_.
  Assignment base_ ABSL_GUARDED_BY(mu_);
  AssignmentBoard::JobWide job_wide_ ABSL_GUARDED_BY(mu_);
  std::set<int> ranks_ ABSL_GUARDED_BY(mu_);
  // Workers that registered before Publish; an elastic job takes them.
  std::set<int> registered_early_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_WORKERS_H_
