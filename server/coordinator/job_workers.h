#ifndef PSTRAIN_SERVER_COORDINATOR_JOB_WORKERS_H_
#define PSTRAIN_SERVER_COORDINATOR_JOB_WORKERS_H_

#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "protos/cluster.pb.h"
#include "protos/coordinator.pb.h"
#include "server/coordinator/assignment_board.h"

namespace pstrain {
namespace coordinator {

// What Join did with a worker that registered while its job trains.
enum class WorkerJoin {
  kJoined,        // handed the job's assignment now, as rank task.index()
  kAlreadyIn,     // it holds an assignment of the job already
  kFixedCount,    // the job keeps the workers it started with (sync slots)
  kBeyondLimit,   // its index is at or past the job's max_workers
  kNotYet,        // nothing published yet: it joins when the job is
                  // (the job is starting)
};

// Which worker ranks a running job trains on, and the assignment each is
// handed (docs/design/elastic_workers.md). The start phase, and each
// rollback, publish the job's worker assignment to the ranks it started
// with, every worker present and every one that joined since; a worker that
// registers while the job trains joins it at once as rank = its task
// index, up to max_workers ranks. A job whose sync rounds have a slot per
// worker (RoundsHaveWorkerSlots) keeps the count it started with: its data
// is dealt to those slots. A rank stays in the job once handed its
// assignment: a worker that leaves or is lost gives back its data, and
// a process that takes the task up again continues from the assignment.
// Thread-safe.
class JobWorkers {
 public:
  // `board` is borrowed and outlives this.
  explicit JobWorkers(AssignmentBoard& board) : board_(board) {}

  JobWorkers(const JobWorkers&) = delete;
  JobWorkers& operator=(const JobWorkers&) = delete;

  // From now on the job's workers get `base` (its worker_rank set to each
  // one's index): hands it to ranks [0, start_count), to the ranks in
  // `present` and those that called Join before, below max_workers (when
  // the job is `elastic`), and to every rank handed one before. Returns the
  // ranks handed it now, ascending.
  std::vector<int> Publish(const Assignment& base, int start_count, int max_workers,
                           bool elastic, const std::vector<int>& present);

  // Worker `task` registered (a new process, or one that restarted): hands
  // it the job's assignment if it may join (WorkerJoin says why not).
  WorkerJoin Join(const TaskId& task);

  // Every rank handed the job's assignment, ascending.
  std::vector<int> Ranks() const;

  // The workers the job started with; 0 before Publish.
  int start_count() const;
  // One past the highest rank a worker may join as; 0 before Publish.
  int max_workers() const;

 private:
  void HandLocked(int rank) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  AssignmentBoard& board_;

  // Held while the board is set, so that a join cannot hand out the
  // assignment of a run that a rollback has just replaced.
  mutable absl::Mutex mu_;
  bool published_ ABSL_GUARDED_BY(mu_) = false;
  Assignment base_ ABSL_GUARDED_BY(mu_);
  int start_count_ ABSL_GUARDED_BY(mu_) = 0;
  int max_workers_ ABSL_GUARDED_BY(mu_) = 0;
  bool elastic_ ABSL_GUARDED_BY(mu_) = false;
  std::set<int> ranks_ ABSL_GUARDED_BY(mu_);
  // Workers that registered before Publish; they join with it.
  std::set<int> registered_early_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_JOB_WORKERS_H_
