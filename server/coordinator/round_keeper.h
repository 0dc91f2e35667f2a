#ifndef PSTRAIN_SERVER_COORDINATOR_ROUND_KEEPER_H_
#define PSTRAIN_SERVER_COORDINATOR_ROUND_KEEPER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/random/random_source.h"
#include "common/retry/backoff.h"
#include "protos/coordinator.pb.h"
#include "protos/parameter_server.pb.h"
#include "server/coordinator/coordinator_metrics.h"
#include "server/coordinator/global_step.h"
#include "server/coordinator/job_control.h"
#include "server/coordinator/snapshot_hold.h"
#include "server/coordinator/training_generation.h"

namespace pstrain {
namespace coordinator {

// What a job's agreed rounds run with, from its start phase.
struct RoundPlan {
  // Worker ranks 0 .. max_workers - 1 may join (StartedJob::max_workers:
  // workers may join the job beyond those it started with).
  int max_workers = 0;
  // R: the members of each round (ReplicasToAggregateOf; every worker when
  // the rounds have worker slots).
  int members_per_round = 0;
  // stop.max_steps; nobody joins a round at or past it, so sync training
  // stops exactly there. 0: no limit.
  int64_t max_steps = 0;
  // Raised to r + 1 by the commit of round r; borrowed, outlives the keeper's
  // use of it.
  GlobalStep* step = nullptr;
  // Called after each commit, with the new step, outside the keeper's lock:
  // the job checks its stop conditions. May be empty.
  std::function<void(int64_t step)> committed;
};

// How a RoundKeeper waits.
struct RoundKeeperOptions {
  // 100 ms between tries, growing to 5 s.
  static RetryOptions DefaultCommitRetry();

  // A commit is retried on Unavailable with these pauses (the deadline is
  // not read) until the rounds are voided or a loss of the job's shards is
  // known.
  RetryOptions commit_retry = DefaultCommitRetry();
  // How long Drop waits for a commit in progress that holds the worker.
  // Default 2 minutes: a commit stalls only on a shard that cannot be
  // reached, which the membership deadline soon finds lost, and then the
  // rollback voids the leases whatever their ledgers say. Bounded so that
  // the caller (the coordinator's ticker, which also finds that loss) is
  // not stuck behind the stalled commit.
  absl::Duration drop_wait = absl::Minutes(2);
};

// The coordinator's side of agreed sync rounds (docs/design/sync_rounds.md):
// which pushes form round r. It admits the first R distinct worker ranks
// that join the open round r, commits the round on every shard (each
// shard's CommitRound, in parallel) on the R-th admission, raises the
// job's global step to r + 1, answers the members, and opens round r + 1.
// Meanwhile round r + 1 already admits: a worker answered LATE pulls r + 1
// as soon as the shards apply r.
//
// Rank rules: one push per rank and round. A join of a newer incarnation
// (push id) of an admitted rank takes the rank's place: the shards replaced
// the older incarnation's staged push with the newer one, so the newer is
// the only push of the rank they hold; the older one's join is answered
// LATE. A lost worker is dropped from the open round (Drop), freeing its
// rank for the process that takes the rank up.
//
// A commit that fails Unavailable is retried until the rounds are voided
// (the shard client retries each call first); one that fails otherwise
// loses the shard (TrainingGeneration::MarkLost while training, else the
// job fails) and voids the rounds until the rollback restarts them.
// Thread-safe; Join never blocks on other joins (the answer comes through
// its callback).
class RoundKeeper final : public SnapshotHold {
 public:
  // The answer to a join: the outcome, or why it is refused.
  using JoinDone = std::function<void(absl::StatusOr<JoinRoundResponse> answer)>;

  // `generation`, `control` and `metrics` (may be null) are borrowed and
  // outlive the keeper.
  RoundKeeper(std::string job_id, Clock& clock, TrainingGeneration& generation, JobControl& control,
              CoordinatorMetrics* metrics, RoundKeeperOptions options = RoundKeeperOptions());
  ~RoundKeeper() override;

  RoundKeeper(const RoundKeeper&) = delete;
  RoundKeeper& operator=(const RoundKeeper&) = delete;

  // The job's rounds are agreed, as `plan` says, from round `start` (the
  // job's start step). Once, before the job trains; joins before it are
  // refused (the rounds are not agreed).
  void Open(RoundPlan plan, int64_t start);

  // `request.task()`'s push joins `request.round()`. `done` is called once,
  // on this thread or the one that commits the round:
  //   MEMBER, once the round is committed on every shard;
  //   LATE, at once: the round is full or committed without it, it is
  //     older than the open round, it is at or past max_steps, or another
  //     push of its rank (or a newer incarnation) holds the rank's place.
  // A join with the same push id again gets the same answer (answers are
  // kept for the last two rounds).
  //   FailedPrecondition without a reason: the rounds are not agreed.
  //   FailedPrecondition WRONG_ROUND: `round` is ahead of the open round.
  //   FailedPrecondition RUN_ROLLED_BACK: a join of another generation, or
  //     the rounds were voided (Void's status) before the round committed.
  //   InvalidArgument: not a worker rank of the job, or no push id.
  void Join(const JoinRoundRequest& request, JoinDone done);

  // Process `incarnation` of the worker of `rank` is lost or replaced:
  // dropped from the open round if admitted and not yet committed (its
  // join is answered LATE: nothing of it is applied). A commit in progress
  // that holds it is waited for (then it is applied), at most
  // options.drop_wait.
  // Call before reading its leases on the shards' ledgers.
  void Drop(int rank, uint64_t push_incarnation);

  // The rounds not committed are void (`why`: a rollback's RUN_ROLLED_BACK,
  // the job's end): waits for a commit in progress, answers every waiting
  // join with `why`, and refuses joins with it until Restart.
  void Void(absl::Status why);
  // The job's shards were restored to `round` (a rollback's checkpoint
  // step): round `round` opens, empty. With `members_per_round`, rounds
  // take that many members from now on (the job's workers changed).
  void Restart(int64_t round, std::optional<int> members_per_round = std::nullopt);

  // No commit starts until Release(); a commit in progress is waited for.
  void Hold() override;
  // Commits a round that filled while held, on this thread.
  void Release() override;

  // The open round; -1 before Open.
  int64_t round() const;

 private:
  // A push: (rank, incarnation, sequence).
  using PushKey = std::tuple<int, uint64_t, uint64_t>;
  struct Member {
    PushKey push;
    // The worker process's registration (JoinRoundRequest.incarnation).
    uint64_t incarnation = 0;
    std::vector<JoinDone> waiting;
  };
  // A round taken out for its commit.
  struct Commit {
    int64_t round = 0;
    std::map<int, Member> members;
  };
  // A callback and its answer, run outside the lock.
  using Answer = std::pair<JoinDone, absl::StatusOr<JoinRoundResponse>>;

  // Answers `request` into `answers`, or keeps `done` with an admitted
  // member until its round commits.
  void AnswerLocked(const JoinRoundRequest& request, JoinDone done, std::vector<Answer>& answers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same for a join of the open round: admits it when it may.
  void AdmitLocked(const PushKey& push, uint64_t incarnation, JoinDone done,
                   std::vector<Answer>& answers) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Remembers `push`'s join of `round` as LATE; the answer.
  JoinRoundResponse LateLocked(int64_t round, const PushKey& push)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Remembers `response` for `push`, a join of `round`, for its retries.
  void RememberLocked(int64_t round, const PushKey& push, const JoinRoundResponse& response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Commits the open round while it is full and nothing holds commits, on
  // the calling thread; then runs `answers` and those of the commits.
  void CommitFullRounds(std::vector<Answer> answers) ABSL_LOCKS_EXCLUDED(mu_);
  bool CanCommitLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // CommitRound(request) on every shard, each retried on Unavailable until
  // `stop`.
  absl::Status CommitOnShards(const CommitRoundRequest& request, const StopSignal& stop);
  // Answers the members of the round being committed, which ended with
  // `status`; the rounds are void unless it is OK. Returns the step after it
  // when it committed.
  std::optional<int64_t> FinishCommitLocked(const absl::Status& status,
                                            std::vector<Answer>& answers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A shard failed a commit for good: the job's loss of it.
  void LoseShard(const absl::Status& why);
  // Answers every join waiting in the open round with `why`, and refuses
  // later ones with it.
  void VoidLocked(const absl::Status& why, std::vector<Answer>& answers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Run(std::vector<Answer> answers);

  // Constant after construction.
  const std::string job_id_;
  Clock& clock_;
  TrainingGeneration& generation_;
  JobControl& control_;
  CoordinatorMetrics* const metrics_;
  const RoundKeeperOptions options_;
  SeededRandom random_;

  mutable absl::Mutex mu_;
  // Set by Open.
  std::optional<RoundPlan> plan_ ABSL_GUARDED_BY(mu_);
  // Not OK while the rounds are void.
  absl::Status refusal_ ABSL_GUARDED_BY(mu_);
  int64_t round_ ABSL_GUARDED_BY(mu_) = -1;
  // The open round's admitted members, by rank.
  std::map<int, Member> members_ ABSL_GUARDED_BY(mu_);
  // The round being committed, its members waiting for the answer.
  std::optional<Commit> committing_ ABSL_GUARDED_BY(mu_);
  int holds_ ABSL_GUARDED_BY(mu_) = 0;
  // What the joins of the last rounds were answered, and in which round.
  std::map<PushKey, JoinRoundResponse> answers_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<int64_t, PushKey>> answered_ ABSL_GUARDED_BY(mu_);
  // Ends the retries of a commit; replaced by Restart.
  std::shared_ptr<StopSignal> stop_ ABSL_GUARDED_BY(mu_);
};

}  // namespace coordinator
}  // namespace pstrain

#endif  // PSTRAIN_SERVER_COORDINATOR_ROUND_KEEPER_H_
