#ifndef PSTRAIN_SERVER_COORDINATOR_MEMBERSHIP_REGISTRY_H_
#define PSTRAIN_SERVER_COORDINATOR_MEMBERSHIP_REGISTRY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "protos/cluster.pb.h"
#include "common/clock/clock.h"

namespace pstrain {
namespace coordinator {

struct MembershipOptions {
  // How often members should send a heartbeat (told to them at Register).
  // Default 2s.
  absl::Duration heartbeat_interval = absl::Seconds(2);
  // A member silent this long is marked LOST and its work handed to others.
  // Default 10s, five missed heartbeats: shorter reassigns a dead worker's
  // data sooner but risks declaring a merely slow process (a long pause,
  // an overloaded machine) lost, which voids its work. Must exceed
  // heartbeat_interval.
  absl::Duration heartbeat_timeout = absl::Seconds(10);
  // Task indices are refused from this value up, per role. Default 4096; it
  // bounds what a bad request can make the coordinator allocate.
  // Coordinator::Create raises it to the runner's num_workers and
  // max_workers when they are larger.
  int max_task_index = 4096;
};

// What Register did.
struct RegisterResult {
  // The member as now registered.
  Member member;
  // Non-zero when a different incarnation of the same task was registered
  // before: the process restarted, and everything the old incarnation held
  // (data leases, checkpoint leases) is void and must be handed back. The
  // caller releases it even if the old incarnation had already been marked
  // LOST; releasing twice does nothing.
  uint64_t replaced_incarnation = 0;
};

// What a member says of itself in a heartbeat.
struct MemberReport {
  int64_t step = 0;
  MemberHealth health = MEMBER_HEALTH_UNSPECIFIED;
  std::string health_detail;
  int32_t queue_depth = 0;
};

// Which processes make up the cluster, by task (ps/1, worker/0, ...): who
// registered with which incarnation, who is alive by heartbeat, and what job
// each works on. Thread-safe.
//
// A task is held by one incarnation at a time. A process that restarts picks
// a new incarnation and replaces its predecessor; the predecessor's calls get
// Aborted from then on, and it may not come back (FailedPrecondition), so a
// stale process cannot take its task back from the one that replaced it.
// Whether a member in `state` is there to work (IDLE or BUSY).
bool IsLive(MemberState state);

class MembershipRegistry {
 public:
  // InvalidArgument: heartbeat_interval <= 0, heartbeat_timeout <=
  // heartbeat_interval, or max_task_index <= 0.
  static absl::StatusOr<std::unique_ptr<MembershipRegistry>> Create(Clock& clock,
                                                                    MembershipOptions options = {});

  MembershipRegistry(const MembershipRegistry&) = delete;
  MembershipRegistry& operator=(const MembershipRegistry&) = delete;

  // Registers `incarnation` of `task` as IDLE with a fresh heartbeat.
  // Registering the incarnation that holds the task again is a retry: it
  // succeeds and keeps the member's state, or brings a LOST or LEFT member
  // back as IDLE.
  //
  // InvalidArgument: the type is not ps, worker or evaluator; the index is
  //   negative or too large; the incarnation is 0; an address is not
  //   host:port; a ps gives no address (workers could not reach it).
  // AlreadyExists: the task is held by a live member at another address (two
  //   processes configured with the same task). Once the other is marked LOST
  //   (heartbeat_timeout), the task is free.
  // FailedPrecondition: this incarnation was replaced by a newer one; the
  //   process is stale and should exit.
  absl::StatusOr<RegisterResult> Register(const TaskId& task, uint64_t incarnation,
                                          absl::string_view address,
                                          absl::string_view metrics_address);

  // Records that the member is alive, with what it reports of itself (its
  // step, health and queue depth, shown by `pstrain cluster`).
  // InvalidArgument: a task Register would refuse.
  // NotFound: the task is not registered (the coordinator may have
  //   restarted): register again.
  // Aborted: the task restarted with a new incarnation, or the member was
  //   marked LOST or LEFT: register again (a replaced one gets
  //   FailedPrecondition there).
  absl::Status Heartbeat(const TaskId& task, uint64_t incarnation,
                         const MemberReport& report = {});

  // Checks that `incarnation` is the live holder of `task`, as every
  // cluster-internal call must, without counting as a heartbeat. Same codes
  // as Heartbeat.
  absl::Status CheckCaller(const TaskId& task, uint64_t incarnation) const;

  // Records the job the member works on: BUSY with `job_id`, or IDLE when it
  // is empty. Same codes as Heartbeat.
  absl::Status SetJob(const TaskId& task, uint64_t incarnation, absl::string_view job_id);

  // Marks the member LEFT (it shut down on purpose); it is no longer
  // expected to send heartbeats. Leaving again, or after being marked LOST,
  // succeeds. Same codes as Heartbeat otherwise.
  absl::Status Leave(const TaskId& task, uint64_t incarnation);

  // Marks every IDLE or BUSY member whose last heartbeat is more than
  // heartbeat_timeout old LOST, and returns those members (as now marked),
  // so the caller can hand their work to others. A member is returned once.
  //
  // Except when the coordinator has heard from none of two or more live
  // members for two heartbeat intervals (ClusterSilence): they would have
  // been heard by then, so its own host is the likelier one cut off (a link
  // down, a network partition), and it marks nobody, so that a partition
  // of the coordinator does not void the work of every member. The first
  // member heard after such a silence gives every live member a fresh
  // deadline, as long as the silence (at least the timeout); a member truly
  // gone is lost that much later.
  std::vector<Member> CheckDeadlines();

  // Every registered member, ordered by type and index.
  std::vector<Member> Members() const;

  // NotFound: the task is not registered.
  absl::StatusOr<Member> Get(const TaskId& task) const;

  // Whether `task` is registered and live.
  bool HasLive(const TaskId& task) const;

  // Members of `type` in `state`.
  int Count(TaskType type, MemberState state) const;

  // The tasks of `type` with index in [0, count) that are not live (IDLE or
  // BUSY), i.e. what a job that needs `count` of them is waiting for.
  std::vector<TaskId> MissingTasks(TaskType type, int count) const;

  const MembershipOptions& options() const { return options_; }

 private:
  struct Entry {
    Member member;
    absl::Time last_heartbeat;
    // Incarnations this one replaced, newest last, so that a stale process
    // cannot register again. Bounded: a task that restarts in a loop keeps
    // only its recent predecessors.
    std::deque<uint64_t> replaced;
  };
  using Key = std::pair<int, int>;  // (type, index)

  MembershipRegistry(Clock& clock, MembershipOptions options);

  absl::Status ValidateTask(const TaskId& task) const;
  // How long a silence of every member makes CheckDeadlines hold back:
  // 2 heartbeat intervals, or less where the timeout is that close.
  absl::Duration ClusterSilence() const;
  // Notes that a member was heard at `now`; after a silence of every
  // member (CheckDeadlines), gives each live member a fresh deadline.
  void NoteHeard(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The entry of `task` if `incarnation` is its live holder, else
  // Heartbeat's error codes.
  absl::StatusOr<Entry*> FindCaller(const TaskId& task, uint64_t incarnation) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  Clock& clock_;
  const MembershipOptions options_;

  mutable absl::Mutex mu_;
  std::map<Key, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // When a member was last heard (registered or beat); InfinitePast before.
  absl::Time last_heard_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // CheckDeadlines has logged the current silence of every member.
  bool silence_logged_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_MEMBERSHIP_REGISTRY_H_
