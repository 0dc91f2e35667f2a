#ifndef PSTRAIN_SERVER_COORDINATOR_ASSIGNMENT_BOARD_H_
#define PSTRAIN_SERVER_COORDINATOR_ASSIGNMENT_BOARD_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "protos/cluster.pb.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace coordinator {

// What every task should be doing (its Assignment; an empty job_id is
// idle), and the long polls of tasks waiting for theirs to change. A long
// poll holds no thread: it is a callback answered when the assignment
// changes, when its deadline passes (Expire, called by a ticker) or when it
// is cancelled. Assignments are per task, not per process, so a process
// that restarted finds its predecessor's work. The job-wide part of an
// assignment (its spec and variable placements, which grow with the model)
// can be held once for all of a job's workers (SetShared). Thread-safe.
class AssignmentBoard {
 public:
  using Callback = std::function<void(const Assignment& assignment)>;
  // An assignment's spec and placements, shared by the tasks given it.
  using JobWide = std::shared_ptr<const Assignment>;

  // What a heartbeat answer says of a task's assignment: no spec, no
  // placements.
  struct AssignedJob {
    std::string job_id;  // empty: idle
    uint64_t replica_epoch = 0;
    std::vector<std::string> ps_addresses;  // with replica_epoch > 0 only
  };

  // The spec and placements of `assignment`, to give many tasks with
  // SetShared.
  static JobWide ShareJobWide(const Assignment& assignment);

  explicit AssignmentBoard(Clock& clock) : clock_(clock) {}

  AssignmentBoard(const AssignmentBoard&) = delete;
  AssignmentBoard& operator=(const AssignmentBoard&) = delete;

  // Sets the assignment of `task` and answers its long polls that wait for
  // a job, or a run of it, other than the new one.
  void Set(const TaskId& task, Assignment assignment);
  // As Set, the assignment being `own` with the spec and placements of
  // `job_wide` (own's are dropped); `job_wide` is held, not copied, so a
  // job's N workers hold one spec rather than N. A null `job_wide`: no spec
  // and no placements.
  void SetShared(const TaskId& task, Assignment own, JobWide job_wide);

  // Every task assigned to `job_id` becomes idle (its polls are answered).
  void ClearJob(absl::string_view job_id);

  // The task's assignment; idle (empty) if it has none.
  Assignment Get(const TaskId& task) const;
  // What a heartbeat answer needs of it, without copying the spec and
  // placements.
  AssignedJob JobOf(const TaskId& task) const;

  // What a long poll's caller knows of its assignment.
  struct KnownRun {
    std::string job_id;
    uint64_t generation = 0;  // Assignment.generation
  };

  // A long poll. When the task's assignment is for another job than
  // `known.job_id` or another run of it than `known.generation`, or
  // `deadline` has passed, fills *now and returns 0. Otherwise registers `done` and returns its id (> 0); `done`
  // is called exactly once, with no lock held: with the new assignment once
  // it changes, or with the current one at the deadline (Expire) or on
  // Cancel.
  uint64_t Await(const TaskId& task, const KnownRun& known, absl::Time deadline, Callback done,
                 Assignment* now);

  // Answers poll `id` now with the current assignment, unless it was
  // answered already.
  void Cancel(uint64_t id);

  // Answers every poll whose deadline has passed.
  void Expire();

  // Answers every poll (the coordinator is shutting down).
  void CancelAll();

  int waiting() const;

 private:
  using Key = std::pair<int, int>;  // (type, index)
  struct Poll {
    Key task;
    KnownRun known;
    absl::Time deadline;
    Callback done;
  };
  struct Answer {
    Callback done;
    Assignment assignment;
  };
  // A task's assignment: its own fields, and the spec and placements in
  // job_wide (own's are empty).
  struct Held {
    Assignment own;
    JobWide job_wide;
  };

  static Key KeyOf(const TaskId& task) { return Key(task.type(), task.index()); }
  // Whether `assignment` is news to a poll that knows `known`.
  static bool Differs(const Assignment& assignment, const KnownRun& known);
  Assignment GetLocked(const Key& key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The job and run a task is assigned ("" and 0: idle), without copying.
  KnownRun RunLocked(const Key& key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the polls `pred` picks and returns their answers.
  std::vector<Answer> TakeLocked(const std::function<bool(const Poll&)>& pred)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Deliver(std::vector<Answer> answers);

  // Constant after construction.
  Clock& clock_;

  mutable absl::Mutex mu_;
  std::map<Key, Held> assignments_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Poll> polls_ ABSL_GUARDED_BY(mu_);
  uint64_t last_poll_id_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_ASSIGNMENT_BOARD_H_
