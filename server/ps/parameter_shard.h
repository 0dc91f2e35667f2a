#ifndef PSTRAIN_SERVER_PS_PARAMETER_SHARD_H_
#define PSTRAIN_SERVER_PS_PARAMETER_SHARD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "common/clock/clock.h"
#include "common/optimizer/learning_rate.h"
#include "common/optimizer/optimizer.h"
#include "protos/parameter_server.pb.h"
#include "server/ps/float_buffer.h"
#include "server/ps/gradient_ref.h"
#include "server/ps/push_dedup.h"
#include "server/ps/push_ledger.h"
#include "server/ps/shard_metrics.h"
#include "server/ps/shard_variable.h"
#include "server/ps/staged_round.h"
#include "server/ps/sync_round_sum.h"
#include "server/ps/update_log.h"
#include "server/ps/version_gate.h"

namespace pstrain {

struct ShardOptions {
  // Outcomes remembered per worker for exactly-once pushes (PushDedup).
  // Default 1024: far more than a worker has in flight.
  int dedup_window = 1024;
  // Bytes of values and slots one job may hold on this shard
  // (--max_variable_mb), counted before anything is allocated (see
  // shard_memory_plan.h); dynamic tables without a budget share what the
  // rest leaves. 0: no limit.
  int64_t max_variable_bytes = 0;
};

struct PushReply {
  PushOutcome outcome = PUSH_OUTCOME_UNSPECIFIED;
  // Why, when the outcome is REJECTED or STALE (Aborted WRONG_ROUND or
  // STALE_VERSION).
  absl::Status status;
  // The shard's version after the decision.
  int64_t version = 0;
};

// What a snapshot holds besides the variables' values.
struct ShardCounters {
  int64_t version = 0;
  // Serialised PushDedup without the contributions of an unfinished sync
  // round or the staged pushes of an agreed one (lost with the round, so
  // their retries must be accepted).
  std::string dedup;
  // The AppliedPushLedger, consistent with the values.
  PushLedger ledger;
};

// The variables of one job on one shard, and everything that updates
// them: optimizer, learning-rate schedule, the update mode's
// rules, exactly-once bookkeeping, and the published version reads can wait
// for. Knows nothing of gRPC. Thread-safe: pushes to different variables
// apply in parallel, reads never see half of an update of a variable.
class ParameterShard {
 public:
  // InvalidArgument naming the field for anything the request gets wrong;
  // ResourceExhausted, naming both figures and --max_variable_mb, when the
  // variables exceed max_variable_bytes. On any error nothing is created.
  static absl::StatusOr<std::unique_ptr<ParameterShard>> Create(
      const CreateVariablesRequest& request, const ShardOptions& options, Clock& clock,
      ShardMetrics& metrics);

  ~ParameterShard();
  ParameterShard(const ParameterShard&) = delete;
  ParameterShard& operator=(const ParameterShard&) = delete;

  const CreateVariablesRequest& request() const { return request_; }
  const std::string& job_id() const { return request_.job_id(); }
  int shard_index() const { return request_.shard_index(); }
  int num_shards() const { return request_.num_shards(); }
  UpdateMode mode() const { return mode_; }
  int64_t variable_bytes() const;

  int num_variables() const { return static_cast<int>(variables_.size()); }
  const ShardVariable& variable(int index) const { return *variables_[index]; }
  // NotFound VARIABLE_UNKNOWN naming the variable and the job.
  absl::StatusOr<int> FindVariable(absl::string_view name) const;

  // Validates and decides a complete push, applying it (or adding it to the
  // sync round) at most once per key. Never blocks for long: a sync round's
  // push returns AGGREGATED without waiting for the others. Outcomes:
  //   APPLIED     applied now (async, bounded staleness; the push that
  //               completes a sync round)
  //   AGGREGATED  counted into the current sync round; with agreed rounds
  //               (CreateVariablesRequest.rounds_agreed) staged in its
  //               worker rank's slot, replacing a push of an older
  //               incarnation of the rank, and applied only if CommitRound
  //               names it
  //   DUPLICATE   this key was applied, aggregated or staged before;
  //               nothing changed
  //   STALE       base_version too old, with status Aborted WRONG_ROUND
  //               (sync: not the current version, i.e. the round was
  //               committed without it, or the same incarnation of the
  //               worker already pushed into this round; agreed rounds: also
  //               a staged push the commit did not name, and its retries)
  //               or STALE_VERSION (bounded staleness: more than S
  //               behind). Re-queue the data.
  //   REJECTED    with status InvalidArgument (malformed key, wrong
  //               variable kind or size, row id out of range or on another
  //               shard, base_version ahead of the shard), Aborted
  //               INCARNATION_SUPERSEDED (an older incarnation of a worker
  //               that has restarted), FailedPrecondition JOB_ENDED (the
  //               job was dropped) or LEASE_SEALED (the data lease in
  //               `source.origin` was handed back: ReadLedger sealed it).
  //               Nothing changed.
  // Gradients are applied as pushed: OptimizerSpec.clip_norm is the
  // worker's, which clips its whole gradient before splitting it over the
  // shards. An applied push is booked in the ledger with `source`: in sync mode
  // every contribution of a round as the round is applied.
  // With an UpdateLog (a primary replica) an accepted push is written to it
  // and answered once the backup applied it; a DUPLICATE is answered once
  // the backup holds everything decided before. When the log fails the
  // push is REJECTED with its status (NOT_PRIMARY, JOB_ENDED), it may be
  // applied here, and so are every later push, commit and ledger read.
  PushReply Push(const PushKey& key, int64_t base_version, absl::Span<const GradientRef> gradients,
                 const PushSource& source = {});

  // Agreed rounds: applies round `round` with exactly the staged pushes
  // `members` (one per worker rank), their gradients summed in rank order
  // and their mean applied; books them in the ledger, drops every other
  // staged push (its retries are STALE), and publishes version round + 1.
  // Waits while updates are paused. Returns the version after the round:
  // a round committed before is answered with the version and changes
  // nothing. Errors change nothing:
  //   InvalidArgument: no member, a malformed member, two of one rank.
  //   FailedPrecondition JOB_ENDED: the shard was shut down.
  //   FailedPrecondition without a reason: the rounds are not agreed.
  //   FailedPrecondition WRONG_ROUND: `round` is ahead of the version.
  //   DataLoss ROUND_MEMBER_MISSING: a member is not staged (a shard that
  //     holds no variables of the job stages nothing and takes any).
  //   The UpdateLog's error (see Push); the round may be applied here.
  absl::StatusOr<int64_t> CommitRound(int64_t round, absl::Span<const PushKey> members);

  // The job's AppliedPushLedger: counters, and the progress of `lease_ids`
  // (every lease remembered when empty), counting the contributions of
  // the open sync round as applied (they will be once it closes); with
  // agreed rounds only committed pushes count, staged ones may never be.
  // With LedgerRead::kSeal, later pushes of those leases are refused, so
  // the progress read stays true: the coordinator seals a lost worker's
  // lease before handing back its rest. Sealing also drops the leases'
  // staged pushes (the coordinator drops their worker from its open round
  // first, so no commit names them; their retries are refused
  // LEASE_SEALED).
  // With an UpdateLog the answer waits until the backup holds every
  // decision taken before it (and the seal); the log's error when it
  // fails (see Push).
  absl::StatusOr<PushLedger> ReadLedger(absl::Span<const int64_t> lease_ids, LedgerRead read);

  // The reply a push with `key` would get without being looked at, if the
  // key was decided before: DUPLICATE or STALE (counted as a dedup hit). Lets
  // a receiver skip assembling a retried push.
  std::optional<PushReply> DecidedBefore(const PushKey& key);

  // The published version: updates whose apply has finished.
  int64_t version() const { return gate_.version(); }
  VersionGate& version_gate() { return gate_; }

  // Copies elements [offset, offset + out.size()) of a dense variable.
  // InvalidArgument: not a dense variable, or the range is outside it.
  absl::Status ReadDense(int variable, int64_t offset, absl::Span<float> out) const;

  // Replaces *out with the bytes of elements [offset, offset + count) of a
  // dense variable. InvalidArgument as ReadDense.
  absl::Status ReadDenseBytes(int variable, int64_t offset, int64_t count, std::string* out) const;

  // InvalidArgument: an id of `ids` is outside the variable's rows or, for
  // an embedding table, held by another shard.
  absl::Status ValidateRowIds(int variable, absl::Span<const int64_t> ids) const {
    return ValidateIds(*variables_[variable], ids);
  }

  // Copies rows `ids` (row_width floats each) of an embedding table or a
  // dense variable. InvalidArgument: an id out of range or held by another
  // shard, or a scalar variable.
  absl::Status ReadRows(int variable, absl::Span<const int64_t> ids, float* out) const;

  // Blocks new updates and waits for those in flight, so the values, slots
  // and counters can be read (snapshot) or replaced (restore) consistently.
  // Every PauseUpdates must be followed by one ResumeUpdates.
  void PauseUpdates();
  void ResumeUpdates();
  // Like PauseUpdates, at the next boundary of sync rounds: the open
  // round's pushes and commit go on, a push that would open the next round
  // waits (in async mode every push: any moment is a boundary). False, and
  // nothing paused, when no boundary came by `deadline` or the shard was
  // shut down. Then ResumeUpdates as after PauseUpdates.
  bool PauseAtRoundBoundary(absl::Time deadline);
  // Between PauseUpdates and ResumeUpdates only.
  ShardCounters counters() const;
  // Paused at a round boundary only: the counters, and from the next
  // decision on the decisions go to `log` (SetUpdateLog), in one step, so
  // that the counters and the log together hold every decision once (a
  // sealed lease is decided without a pause). A backup rebuilt from a copy
  // made now and fed `log` holds what this shard holds
  // (docs/design/replicas.md).
  ShardCounters CutLog(std::shared_ptr<UpdateLog> log);
  // Between PauseUpdates and ResumeUpdates only: installs the counters of a
  // restored snapshot (after the caller replaced the values), drops an
  // unfinished sync round or staged pushes, and publishes the version. DataLoss if the dedup
  // state does not decode.
  absl::Status RestoreCounters(const ShardCounters& counters);

  // Ends every waiting read with FailedPrecondition and refuses later
  // pushes: the job is being dropped.
  void Shutdown();

  // Hot-standby replicas (docs/design/replicas.md): from the next decision
  // on, writes every decision to `log` and acknowledges it (a push's
  // answer, a new version published to pulls) only once the log says the
  // backup applied it. Null: no replicas, as without (the default).
  void SetUpdateLog(std::shared_ptr<UpdateLog> log);

 private:
  // A decision to be replicated before it is acknowledged (no log: none).
  struct Replication {
    std::shared_ptr<UpdateLog> log;
    uint64_t ticket = 0;
  };

  ParameterShard(const CreateVariablesRequest& request, const ShardOptions& options, Clock& clock,
                 ShardMetrics& metrics, std::unique_ptr<Optimizer> optimizer,
                 LearningRate learning_rate);

  absl::Status Validate(const PushKey& key, absl::Span<const GradientRef> gradients) const;
  absl::Status CheckRange(int variable, int64_t offset, int64_t count) const;
  absl::Status ValidateIds(const ShardVariable& v, absl::Span<const int64_t> ids) const;
  void Apply(absl::Span<const GradientRef> gradients, int64_t step, float scale);
  // Applies the mean of the round's sum of `contributions` gradients.
  void ApplyRound(int64_t step, int contributions) ABSL_EXCLUSIVE_LOCKS_REQUIRED(round_mu_);
  // Sync mode with a slot per worker: whether `worker`'s part of the round
  // at `base_version` is already in (that round is complete, or the worker
  // contributed to the open one, possibly in an earlier incarnation).
  bool SlotAlreadyFilled(int worker, int64_t base_version) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  PushReply Reject(absl::Status status);
  // The status of a STALE reply, by the update mode.
  absl::Status WhyStale() const;
  // Push, step by step. The refusal of a push that must not be counted
  // (shard dropped, old incarnation, seen before, lease handed back, bad
  // base version, stale); nullopt when it goes on.
  std::optional<PushReply> RefuseLocked(const PushKey& key, int64_t base_version,
                                        const PushSource& source, bool sync)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sync: takes the push's place in the open round (closing it when it is
  // the last expected) and returns its slot in the round's sum.
  int JoinRoundLocked(const PushKey& key, const PushSource& source)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sync: adds the gradients to the round's sum; the last one applies the
  // round and books every contribution. The others answer AGGREGATED at
  // `joined_version`.
  // Each answer waits for `joined` (this push's entry) to be replicated;
  // the round's new version for every entry up to the closing push's.
  PushReply AddToRound(const PushKey& key, absl::Span<const GradientRef> gradients, int slot,
                       int64_t joined_version, const Replication& joined);
  // Agreed rounds: stages a push for the current round.
  PushReply Stage(const PushKey& key, int64_t base_version, absl::Span<const GradientRef> gradients,
                  const PushSource& source);
  // CommitRound, step by step: whether round `round` may be committed now
  // with `members` (OK also for a round committed before: the caller
  // answers the version).
  absl::Status CheckCommitLocked(int64_t round, absl::Span<const PushKey> members) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the members out of the stage, books them, and drops the rest.
  std::vector<StagedPush> TakeMembersLocked(absl::Span<const PushKey> members)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies the mean of `members`' gradients (in rank order) at `step`.
  void ApplyMembers(const std::vector<StagedPush>& members, int64_t step);
  // The answer to a push whose update is in the values at `step`.
  PushReply Applied(int64_t step);
  // Books an applied push in the ledger.
  void BookApplied(const PushKey& key, const PushSource& source) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordTables();

  // Replication, step by step (parameter_shard_replication.cc). A
  // decision written to the log, or the newest one, which answers about
  // decisions taken before.
  Replication AppendLocked(ReplicaEntry entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Replication NewestLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ShardCounters CountersLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  PushLedger ReadLedgerLocked(absl::Span<const int64_t> lease_ids, LedgerRead read)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An accepted push's entry: `prepared` if Push built it before the lock
  // (the usual case), else built now (the log was set meanwhile).
  ReplicaEntry PushEntryLocked(std::optional<PushRequest>& prepared, const PushKey& key,
                               int64_t base_version, absl::Span<const GradientRef> gradients,
                               const PushSource& source) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<PushRequest> PreparePush(const PushKey& key, int64_t base_version,
                                         absl::Span<const GradientRef> gradients,
                                         const PushSource& source) const;
  // Waits for `r`; on the log's error the shard refuses everything from now
  // on and ends waiting reads with that error.
  absl::Status AwaitReplicated(const Replication& r);
  // `reply` once the backup holds `r`, or REJECTED with the log's error.
  PushReply Acknowledged(PushReply reply, const Replication& r);

  // Constant after construction.
  const CreateVariablesRequest request_;
  const ShardOptions options_;
  Clock& clock_;
  ShardMetrics& metrics_;
  const std::unique_ptr<Optimizer> optimizer_;
  const LearningRate learning_rate_;
  const UpdateMode mode_;
  const int replicas_to_aggregate_;
  // RoundsHaveWorkerSlots: round r has one slot per worker rank, summed in
  // rank order, and the data of each slot is fixed by the round, so a push
  // for a slot already filled is a DUPLICATE whatever its incarnation, not
  // a second contribution nor a late one. Otherwise slots go by arrival and
  // a late push is STALE.
  const bool slots_by_worker_;
  // Sync mode on several shards (CreateVariablesRequest.rounds_agreed):
  // pushes are staged, and rounds applied by CommitRound.
  const bool rounds_agreed_;
  const int staleness_bound_;
  // Pushes are accepted from worker ranks 0 .. max_workers_ - 1
  // (CreateVariablesRequest.max_workers: workers may join a running job).
  const int max_workers_;
  std::vector<std::unique_ptr<ShardVariable>> variables_;
  absl::flat_hash_map<std::string, int> by_name_;

  VersionGate gate_;

  mutable absl::Mutex mu_;
  // Updates decided (committed); the published version trails it while
  // applies run.
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  // Decided updates whose apply (or round contribution) has not finished.
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  // PauseAtRoundBoundary waits for the open round to end.
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  // Replicas: where decisions are written (null: no replicas), the ticket
  // of the newest one, and the log's error once it failed.
  std::shared_ptr<UpdateLog> log_ ABSL_GUARDED_BY(mu_);
  uint64_t newest_ticket_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status log_failure_ ABSL_GUARDED_BY(mu_);
  // Whether log_ is set, read without mu_ so that Push copies a forwarded
  // push before taking it, and costs nothing more without replicas.
  std::atomic<bool> logging_{false};
  PushDedup dedup_ ABSL_GUARDED_BY(mu_);
  AppliedPushLedger ledger_ ABSL_GUARDED_BY(mu_);
  // Sync mode: the current round's contributors.
  std::vector<PushKey> round_keys_ ABSL_GUARDED_BY(mu_);
  // Parallel to round_keys_: booked in the ledger when the round closes.
  std::vector<PushSource> round_sources_ ABSL_GUARDED_BY(mu_);
  int round_summed_ ABSL_GUARDED_BY(mu_) = 0;
  // Sync mode: the round is being applied (closed by its last push, or
  // committed); new pushes and commits wait.
  bool round_closed_ ABSL_GUARDED_BY(mu_) = false;
  // Agreed rounds: the pushes of the open round.
  StagedRound stage_ ABSL_GUARDED_BY(mu_);

  // Sync mode: the round's sum, in slot order. Taken without mu_.
  absl::Mutex round_mu_;
  std::unique_ptr<SyncRoundSum> round_sum_ ABSL_GUARDED_BY(round_mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_SERVER_PS_PARAMETER_SHARD_H_
