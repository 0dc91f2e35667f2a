#include "server/ps/parameter_shard.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/config/job_spec_defaults.h"
#include "common/config/sync_rounds.h"
#include "common/placement/row_placement.h"
#include "common/status/error_reason.h"
#include "common/status/status_macros.h"
#include "glog/logging.h"
#include "server/ps/replica_entry.h"
#include "server/ps/shard_memory_plan.h"

namespace pstrain {
namespace {

// The distinct ids of `ids` with their rows summed, or nothing when the
// ids are already distinct.
bool Coalesce(absl::Span<const int64_t> ids, const float* values, int64_t width,
              std::vector<int64_t>* unique_ids, std::vector<float>* sums) {
  // Sorting a copy finds repeats far faster than hashing every id, and
  // pushes rarely repeat an id.
  std::vector<int64_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) return false;
  absl::flat_hash_map<int64_t, int32_t> first;
  first.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    auto [it, inserted] = first.emplace(ids[i], static_cast<int32_t>(unique_ids->size()));
    const float* src = values + i * width;
    if (inserted) {
      unique_ids->push_back(ids[i]);
      sums->insert(sums->end(), src, src + width);
    } else {
      float* dst = sums->data() + static_cast<int64_t>(it->second) * width;
      for (int64_t j = 0; j < width; ++j) dst[j] += src[j];
    }
  }
  return true;
}

// Segments of a dense gradient must cover every element exactly once.
absl::Status ValidateSegments(const ShardVariable& v, const GradientRef& g) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const DenseSegment& s : g.segments) {
    ranges.emplace_back(s.offset, s.offset + static_cast<int64_t>(s.values.size()));
  }
  std::sort(ranges.begin(), ranges.end());
  int64_t next = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != next || end <= begin) break;
    next = end;
  }
  if (next != v.num_elements || !g.values.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the pieces of the gradient of \"",
                                                   v.spec.name(), "\" do not cover its ",
                                                   v.num_elements, " elements exactly once"));
  }
  return absl::OkStatus();
}

std::string RejectionLabel(const absl::Status& status) {
  std::string reason = absl::StatusCodeToString(status.code());
  for (char& c : reason) c = c == ' ' ? '_' : static_cast<char>(std::tolower(c));
  return reason;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ParameterShard>> ParameterShard::Create(
    const CreateVariablesRequest& request, const ShardOptions& options, Clock& clock,
    ShardMetrics& metrics) {
  RETURN_IF_ERROR(ValidateName("job_id", request.job_id(), false));
  if (request.num_shards() < 1 || request.shard_index() < 0 ||
      request.shard_index() >= request.num_shards()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard_index (", request.shard_index(),
                     ") must be in [0, num_shards = ", request.num_shards(), ")"));
  }
  if (request.num_workers() < 1) {
    return absl::InvalidArgumentError("num_workers must be >= 1");
  }
  if (request.max_workers() != 0 && request.max_workers() < request.num_workers()) {
    return absl::InvalidArgumentError(absl::StrCat("max_workers (", request.max_workers(),
                                                   ") must be 0 or at least num_workers (",
                                                   request.num_workers(), ")"));
  }
  const TrainingSpec& t = request.training();
  if (!UpdateMode_IsValid(t.update_mode())) {
    return absl::InvalidArgumentError("training.update_mode is unknown");
  }
  if (t.replicas_to_aggregate() < 0 || t.replicas_to_aggregate() > request.num_workers()) {
    return absl::InvalidArgumentError(
        absl::StrCat("training.replicas_to_aggregate (", t.replicas_to_aggregate(),
                     ") must be in [0, num_workers = ", request.num_workers(), "]"));
  }
  if (request.rounds_agreed() && UpdateModeOf(t) != UPDATE_MODE_SYNC) {
    return absl::InvalidArgumentError("rounds_agreed is for training.update_mode sync only");
  }
  if (t.staleness_bound() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("training.staleness_bound must be >= 1 (0: default ",
                     StalenessBoundOf(TrainingSpec()), ")"));
  }
  const float clip = request.optimizer().clip_norm();
  if (!(clip >= 0) || !std::isfinite(clip)) {
    return absl::InvalidArgumentError("optimizer.clip_norm must be finite and >= 0");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> optimizer, Optimizer::Create(request.optimizer()));
  ASSIGN_OR_RETURN(LearningRate lr, LearningRate::Create(request.optimizer()));
  // Before anything is allocated: a request over the limit creates nothing.
  ASSIGN_OR_RETURN(const ShardMemoryPlan memory,
                   PlanShardMemory(request, optimizer->num_slots(), options.max_variable_bytes));

  std::unique_ptr<ParameterShard> shard(
      new ParameterShard(request, options, clock, metrics, std::move(optimizer), lr));
  for (int i = 0; i < request.variables_size(); ++i) {
    const VariableSpec& spec = request.variables(i);
    if (shard->by_name_.contains(spec.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("variables[", i, "].name \"", spec.name(), "\" appears twice"));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<ShardVariable> v,
                     MakeShardVariable(spec, absl::StrCat("variables[", i, "]"), t.seed(),
                                       *shard->optimizer_, memory.table_budgets[i]));
    shard->by_name_[spec.name()] = i;
    shard->variables_.push_back(std::move(v));
  }
  {
    absl::MutexLock l(&shard->round_mu_);
    std::vector<SyncRoundSum::VariableShape> shapes;
    for (const auto& v : shard->variables_) shapes.push_back({v->num_elements, v->row_width});
    shard->round_sum_ = std::make_unique<SyncRoundSum>(std::move(shapes));
  }
  metrics.SetVersion(0);
  metrics.SetAppliedPushes(0);
  metrics.SetVariables(shard->num_variables(), shard->variable_bytes());
  shard->RecordTables();
  return shard;
}

ParameterShard::ParameterShard(const CreateVariablesRequest& request, const ShardOptions& options,
                               Clock& clock, ShardMetrics& metrics,
                               std::unique_ptr<Optimizer> optimizer, LearningRate learning_rate)
    : request_(request),
      options_(options),
      clock_(clock),
      metrics_(metrics),
      optimizer_(std::move(optimizer)),
      learning_rate_(learning_rate),
      mode_(UpdateModeOf(request.training())),
      replicas_to_aggregate_(ReplicasToAggregateOf(request.training(), request.num_workers())),
      slots_by_worker_(RoundsHaveWorkerSlots(request.training(), request.num_workers())),
      rounds_agreed_(request.rounds_agreed()),
      staleness_bound_(StalenessBoundOf(request.training())),
      max_workers_(request.max_workers() > 0 ? request.max_workers() : request.num_workers()),
      gate_(clock, 0),
      dedup_(options.dedup_window),
      ledger_(request.generation()),
      stage_(max_workers_) {}

ParameterShard::~ParameterShard() { Shutdown(); }

void ParameterShard::Shutdown() {
  {
    absl::MutexLock l(&mu_);
    shut_down_ = true;
  }
  gate_.Shutdown(WithReason(
      absl::FailedPreconditionError(absl::StrCat("job ", job_id(), " was dropped from this shard")),
      ERROR_REASON_JOB_ENDED));
}

int64_t ParameterShard::variable_bytes() const {
  int64_t bytes = 0;
  for (const auto& v : variables_) {
    bytes += v->embedding ? v->table->stats().bytes : v->dense->bytes();
  }
  return bytes;
}

absl::StatusOr<int> ParameterShard::FindVariable(absl::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) {
    return WithReason(absl::NotFoundError(absl::StrCat("variable \"", absl::CEscape(name),
                                                       "\" is not held by shard ", shard_index(),
                                                       " for job ", job_id())),
                      ERROR_REASON_VARIABLE_UNKNOWN);
  }
  return it->second;
}

absl::Status ParameterShard::Validate(const PushKey& key,
                                      absl::Span<const GradientRef> gradients) const {
  if (key.worker < 0 || key.worker >= max_workers_ || key.incarnation == 0 || key.sequence == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("push id needs worker in [0, ", max_workers_,
                     "), incarnation > 0 and sequence > 0; got worker ", key.worker,
                     " incarnation ", key.incarnation, " sequence ", key.sequence));
  }
  std::vector<bool> seen(variables_.size());
  for (const GradientRef& g : gradients) {
    if (g.variable < 0 || g.variable >= num_variables()) {
      return absl::InvalidArgumentError(absl::StrCat("no variable #", g.variable));
    }
    const ShardVariable& v = *variables_[g.variable];
    if (seen[g.variable]) {
      return absl::InvalidArgumentError(
          absl::StrCat("the push holds two gradients of \"", v.spec.name(), "\""));
    }
    seen[g.variable] = true;
    if (!g.rows) {
      if (v.embedding) {
        return absl::InvalidArgumentError(absl::StrCat(
            "\"", v.spec.name(), "\" is an embedding table; push its gradient as rows"));
      }
      if (!g.segments.empty()) {
        RETURN_IF_ERROR(ValidateSegments(v, g));
        continue;
      }
      if (static_cast<int64_t>(g.values.size()) != v.num_elements) {
        return absl::InvalidArgumentError(
            absl::StrCat("the gradient of \"", v.spec.name(), "\" has ", g.values.size(),
                         " elements; the variable has ", v.num_elements));
      }
      continue;
    }
    if (!v.embedding && v.spec.shape().dims_size() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", v.spec.name(), "\" is a scalar and has no rows"));
    }
    if (static_cast<int64_t>(g.values.size()) != static_cast<int64_t>(g.ids.size()) * v.row_width) {
      return absl::InvalidArgumentError(absl::StrCat("the rows of \"", v.spec.name(), "\" hold ",
                                                     g.values.size(), " values for ", g.ids.size(),
                                                     " ids of width ", v.row_width));
    }
    RETURN_IF_ERROR(ValidateIds(v, g.ids));
  }
  return absl::OkStatus();
}

PushReply ParameterShard::Reject(absl::Status status) {
  metrics_.RecordRejected(RejectionLabel(status));
  PushReply reply;
  reply.outcome = PUSH_OUTCOME_REJECTED;
  reply.status = std::move(status);
  absl::MutexLock l(&mu_);
  reply.version = version_;
  return reply;
}

PushReply ParameterShard::Push(const PushKey& key, int64_t base_version,
                               absl::Span<const GradientRef> gradients, const PushSource& source) {
  if (absl::Status s = Validate(key, gradients); !s.ok()) return Reject(std::move(s));
  if (rounds_agreed_) return Stage(key, base_version, gradients, source);

  std::optional<PushRequest> forwarded = PreparePush(key, base_version, gradients, source);
  const bool sync = mode_ == UPDATE_MODE_SYNC;
  int64_t step = 0;
  int slot = 0;                // sync: this push's place in the round's sum
  int64_t joined_version = 0;  // sync: the shard's version once it joined
  std::optional<PushReply> refused;
  Replication replication;
  {
    absl::MutexLock l(&mu_);
    // Pushes wait while the shard is paused (a snapshot or restore), and in
    // sync mode while a closed round is being applied.
    // While a cut waits for a round boundary, a push that would open the
    // next round (any push, in async mode) waits too.
    auto may_push = [this, sync]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return shut_down_ || (!paused_ && !(sync && round_closed_) &&
                            !(draining_ && (!sync || round_keys_.empty())));
    };
    mu_.Await(absl::Condition(&may_push));
    refused = RefuseLocked(key, base_version, source, sync);
    if (refused.has_value()) {
      // A duplicate's first decision may still be on its way to the backup.
      if (refused->outcome == PUSH_OUTCOME_DUPLICATE) replication = NewestLocked();
    } else {
      ++in_flight_;
      if (sync) {
        slot = JoinRoundLocked(key, source);
        joined_version = version_;
      } else {
        step = version_++;
        dedup_.Record(key, PUSH_OUTCOME_APPLIED);
        BookApplied(key, source);
      }
      if (log_ != nullptr) {
        replication =
            AppendLocked(PushEntryLocked(forwarded, key, base_version, gradients, source));
      }
    }
  }
  if (refused.has_value()) return Acknowledged(*std::move(refused), replication);
  if (sync) return AddToRound(key, gradients, slot, joined_version, replication);
  Apply(gradients, step, 1.0f);
  {
    absl::MutexLock l(&mu_);
    --in_flight_;
  }
  if (absl::Status s = AwaitReplicated(replication); !s.ok()) return Reject(std::move(s));
  return Applied(step);
}

std::optional<PushReply> ParameterShard::RefuseLocked(const PushKey& key, int64_t base_version,
                                                      const PushSource& source, bool sync) {
  PushReply reply;
  reply.version = version_;
  auto rejected = [&](absl::string_view label, absl::Status status) {
    metrics_.RecordRejected(label);
    reply.outcome = PUSH_OUTCOME_REJECTED;
    reply.status = std::move(status);
    return reply;
  };
  if (shut_down_) {
    return rejected("failed_precondition",
                    WithReason(absl::FailedPreconditionError(
                                   absl::StrCat("job ", job_id(), " was dropped from this shard")),
                               ERROR_REASON_JOB_ENDED));
  }
  if (!log_failure_.ok()) return rejected("failed_precondition", log_failure_);
  const PushDedup::Lookup seen = dedup_.Check(key);
  if (seen.verdict == PushDedup::Verdict::kOldIncarnation) {
    return rejected(
        "aborted",
        WithReason(absl::AbortedError(absl::StrCat(
                       "worker ", key.worker, " restarted: incarnation ", key.incarnation,
                       " is older than its current incarnation ", seen.current_incarnation)),
                   ERROR_REASON_INCARNATION_SUPERSEDED));
  }
  if (seen.verdict == PushDedup::Verdict::kSeen) {
    metrics_.RecordDedupHit();
    reply.outcome =
        seen.outcome == PUSH_OUTCOME_STALE ? PUSH_OUTCOME_STALE : PUSH_OUTCOME_DUPLICATE;
    if (reply.outcome == PUSH_OUTCOME_STALE) reply.status = WhyStale();
    return reply;
  }
  if (source.origin.has_value() && ledger_.Sealed(source.origin->lease_id)) {
    // The coordinator read this lease's progress and handed back the rest
    // to another worker: applying this push now would train those records
    // twice.
    return rejected("failed_precondition",
                    WithReason(absl::FailedPreconditionError(absl::StrCat(
                                   "data lease ", source.origin->lease_id,
                                   " was handed back (its worker was lost); push not applied")),
                               ERROR_REASON_LEASE_SEALED));
  }
  if (base_version > version_ || base_version < 0) {
    return rejected("invalid_argument", absl::InvalidArgumentError(absl::StrCat(
                                            "base_version ", base_version, " is not in [0, ",
                                            version_, "], the shard's version")));
  }
  const int64_t staleness = version_ - base_version;
  metrics_.RecordStaleness(staleness);
  if (sync && slots_by_worker_ && !rounds_agreed_ && SlotAlreadyFilled(key.worker, base_version)) {
    // The worker's part of that round is in: a worker that took up a lost
    // one's data pushed the same batch again. Counted once.
    dedup_.Record(key, PUSH_OUTCOME_AGGREGATED);
    metrics_.RecordDedupHit();
    reply.outcome = PUSH_OUTCOME_DUPLICATE;
    return reply;
  }
  bool stale = false;
  if (sync) {
    stale = staleness > 0;
    for (const PushKey& k : round_keys_) stale = stale || k.worker == key.worker;
    // A newer incarnation replaces the staged push; the same one pushed a
    // second batch into a round it is in.
    const StagedPush* staged = rounds_agreed_ ? stage_.Find(key.worker) : nullptr;
    stale = stale || (staged != nullptr && staged->key.incarnation == key.incarnation);
  } else if (mode_ == UPDATE_MODE_BOUNDED_STALENESS) {
    stale = staleness > staleness_bound_;
  }
  if (stale) {
    dedup_.Record(key, PUSH_OUTCOME_STALE);
    metrics_.RecordRejected("stale");
    reply.outcome = PUSH_OUTCOME_STALE;
    reply.status = WhyStale();
    return reply;
  }
  return std::nullopt;
}

int ParameterShard::JoinRoundLocked(const PushKey& key, const PushSource& source) {
  const int slot = slots_by_worker_ ? key.worker : static_cast<int>(round_keys_.size());
  round_keys_.push_back(key);
  round_sources_.push_back(source);
  dedup_.Record(key, PUSH_OUTCOME_AGGREGATED);
  if (static_cast<int>(round_keys_.size()) == replicas_to_aggregate_) {
    round_closed_ = true;
    ++version_;
  }
  return slot;
}

PushReply ParameterShard::AddToRound(const PushKey& key, absl::Span<const GradientRef> gradients,
                                     int slot, int64_t joined_version, const Replication& joined) {
  {
    absl::MutexLock r(&round_mu_);
    round_sum_->Add(slot, gradients);
  }
  bool last = false;
  int64_t step = 0;
  // The last to sum may not be the push that closed the round: the round's
  // version waits for every entry decided so far, the closing one among
  // them (no push joins a closed round).
  Replication round;
  {
    absl::MutexLock l(&mu_);
    ++round_summed_;
    last = round_closed_ && round_summed_ == replicas_to_aggregate_;
    if (!last) --in_flight_;
    step = version_ - 1;
    if (last) round = NewestLocked();
  }
  if (!last) {
    PushReply reply;
    reply.outcome = PUSH_OUTCOME_AGGREGATED;
    reply.version = joined_version;
    return Acknowledged(reply, joined);
  }
  // The round's last gradient: apply the sum, and book every contribution.
  {
    absl::MutexLock r(&round_mu_);
    ApplyRound(step, replicas_to_aggregate_);
  }
  {
    absl::MutexLock l(&mu_);
    for (size_t i = 0; i < round_keys_.size(); ++i) {
      const PushKey& k = round_keys_[i];
      // Every contribution is in the values now, also one whose worker
      // restarted since.
      BookApplied(k, round_sources_[i]);
      // A contributor that restarted since keeps its newer incarnation.
      if (dedup_.Check(k).verdict == PushDedup::Verdict::kOldIncarnation) continue;
      dedup_.Record(k, k == key ? PUSH_OUTCOME_APPLIED : PUSH_OUTCOME_AGGREGATED);
    }
    round_keys_.clear();
    round_sources_.clear();
    round_summed_ = 0;
    round_closed_ = false;
    --in_flight_;
  }
  if (absl::Status s = AwaitReplicated(round); !s.ok()) return Reject(std::move(s));
  return Applied(step);
}

PushReply ParameterShard::Stage(const PushKey& key, int64_t base_version,
                                absl::Span<const GradientRef> gradients, const PushSource& source) {
  // Copied before the lock is taken, so that copying a large gradient holds
  // up no other push; a push refused below wasted its copy.
  StagedPush push{key, source, GradientCopy(gradients)};
  std::optional<PushRequest> forwarded = PreparePush(key, base_version, gradients, source);
  PushReply reply;
  Replication replication;
  {
    absl::MutexLock l(&mu_);
    auto may_push = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return shut_down_ || (!paused_ && !round_closed_ && !(draining_ && stage_.empty()));
    };
    mu_.Await(absl::Condition(&may_push));
    if (std::optional<PushReply> refused = RefuseLocked(key, base_version, source, true)) {
      if (refused->outcome == PUSH_OUTCOME_DUPLICATE) replication = NewestLocked();
      reply = *std::move(refused);
    } else {
      // A push of an older incarnation of the rank is replaced; PushDedup
      // forgets that incarnation with the Record below, so its retries are
      // refused INCARNATION_SUPERSEDED.
      if (stage_.Put(std::move(push)).has_value()) metrics_.RecordStagedDropped(1);
      dedup_.Record(key, PUSH_OUTCOME_AGGREGATED);
      reply.outcome = PUSH_OUTCOME_AGGREGATED;
      reply.version = version_;
      if (log_ != nullptr) {
        replication =
            AppendLocked(PushEntryLocked(forwarded, key, base_version, gradients, source));
      }
    }
  }
  return Acknowledged(std::move(reply), replication);
}

absl::StatusOr<int64_t> ParameterShard::CommitRound(int64_t round,
                                                    absl::Span<const PushKey> members) {
  RETURN_IF_ERROR(StagedRound::ValidateMembers(members, max_workers_));
  if (!rounds_agreed_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job_id(), " decides its sync rounds on this shard alone: nothing to commit"));
  }
  std::vector<StagedPush> taken;
  int64_t step = 0;
  std::optional<int64_t> committed_before;
  Replication replication;
  {
    absl::MutexLock l(&mu_);
    // Like a push, a commit waits while updates are paused (a snapshot or
    // restore) and while another round is applied; pushes wait for it.
    auto may_commit = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return shut_down_ || (!paused_ && !round_closed_ && in_flight_ == 0);
    };
    mu_.Await(absl::Condition(&may_commit));
    RETURN_IF_ERROR(CheckCommitLocked(round, members));
    if (round < version_) {
      // Committed before: answered once the backup holds it.
      committed_before = version_;
      replication = NewestLocked();
    } else {
      taken = TakeMembersLocked(members);
      step = version_++;
      round_closed_ = true;
      ++in_flight_;
      if (log_ != nullptr) replication = AppendLocked(CommitEntry(job_id(), round, members));
    }
  }
  if (committed_before.has_value()) {
    RETURN_IF_ERROR(AwaitReplicated(replication));
    return *committed_before;
  }
  ApplyMembers(taken, step);
  {
    absl::MutexLock l(&mu_);
    round_closed_ = false;
    --in_flight_;
  }
  metrics_.RecordRoundCommitted();
  RETURN_IF_ERROR(AwaitReplicated(replication));
  return Applied(step).version;
}

absl::Status ParameterShard::CheckCommitLocked(int64_t round,
                                               absl::Span<const PushKey> members) const {
  if (shut_down_) {
    return WithReason(absl::FailedPreconditionError(
                          absl::StrCat("job ", job_id(), " was dropped from this shard")),
                      ERROR_REASON_JOB_ENDED);
  }
  if (round > version_) {
    return WithReason(absl::FailedPreconditionError(absl::StrCat(
                          "round ", round, " is ahead of this shard's version ", version_)),
                      ERROR_REASON_WRONG_ROUND);
  }
  if (round < version_ || variables_.empty()) return absl::OkStatus();
  for (const PushKey& m : members) {
    if (stage_.Holds(m)) continue;
    return WithReason(
        absl::DataLossError(absl::StrCat(
            "round ", round, ": the push of worker ", m.worker, " incarnation ", m.incarnation,
            " sequence ", m.sequence, " is not staged on shard ", shard_index(),
            " (lost with a restart, or replaced by a newer incarnation's",
            " push, or dropped with its sealed lease); nothing applied")),
        ERROR_REASON_ROUND_MEMBER_MISSING);
  }
  return absl::OkStatus();
}

std::vector<StagedPush> ParameterShard::TakeMembersLocked(absl::Span<const PushKey> members) {
  std::vector<PushKey> dropped;
  // A shard without variables of the job stages nothing: it takes any
  // members, and applies none.
  std::vector<StagedPush> taken =
      stage_.Commit(variables_.empty() ? absl::Span<const PushKey>() : members, &dropped);
  // Late: their retries are STALE, as a push for this round from now on.
  // One whose worker restarted since keeps the newer incarnation.
  for (const PushKey& k : dropped) {
    if (dedup_.Check(k).verdict != PushDedup::Verdict::kOldIncarnation) {
      dedup_.Record(k, PUSH_OUTCOME_STALE);
    }
  }
  metrics_.RecordStagedDropped(static_cast<int64_t>(dropped.size()));
  for (const StagedPush& m : taken) BookApplied(m.key, m.source);
  return taken;
}

void ParameterShard::ApplyMembers(const std::vector<StagedPush>& members, int64_t step) {
  if (members.empty()) return;  // a shard without variables of the job
  absl::MutexLock r(&round_mu_);
  round_sum_->Clear();
  for (size_t i = 0; i < members.size(); ++i) {
    round_sum_->Add(static_cast<int>(i), members[i].gradients.refs());
  }
  ApplyRound(step, static_cast<int>(members.size()));
}

PushReply ParameterShard::Applied(int64_t step) {
  gate_.Increment();
  metrics_.SetVersion(gate_.version());
  PushReply reply;
  reply.outcome = PUSH_OUTCOME_APPLIED;
  reply.version = step + 1;
  return reply;
}

void ParameterShard::Apply(absl::Span<const GradientRef> gradients, int64_t step, float scale) {
  const absl::Time start = clock_.Now();
  const UpdateStep update{static_cast<float>(learning_rate_.At(step)), step + 1, scale};
  bool tables = false;
  for (const GradientRef& g : gradients) {
    ShardVariable& v = *variables_[g.variable];
    if (!g.rows && !g.segments.empty()) {
      std::vector<int64_t> offsets, counts;
      std::vector<const float*> grads;
      for (const DenseSegment& s : g.segments) {
        offsets.push_back(s.offset);
        counts.push_back(static_cast<int64_t>(s.values.size()));
        grads.push_back(s.values.data());
      }
      v.dense->ApplyPieces(*optimizer_, update, offsets, grads, counts);
      continue;
    }
    if (!g.rows) {
      v.dense->Apply(*optimizer_, update, g.values.data());
      continue;
    }
    std::vector<int64_t> ids;
    std::vector<float> sums;
    const bool merged = Coalesce(g.ids, g.values.data(), v.row_width, &ids, &sums);
    const absl::Span<const int64_t> use_ids = merged ? absl::MakeConstSpan(ids) : g.ids;
    const float* use_values = merged ? sums.data() : g.values.data();
    if (v.embedding) {
      v.table->Apply(*optimizer_, update, use_ids, use_values);
      tables = true;
    } else {
      v.dense->ApplyRows(*optimizer_, update, use_ids, use_values);
    }
  }
  metrics_.RecordApply(clock_.Now() - start);
  if (tables) RecordTables();
}

void ParameterShard::ApplyRound(int64_t step, int contributions) {
  CHECK_EQ(round_sum_->summed_slots(), contributions) << "a sync round applied unsummed";
  const std::vector<GradientRef> sums = round_sum_->Sums();
  Apply(sums, step, 1.0f / static_cast<float>(contributions));
  round_sum_->Clear();
}

bool ParameterShard::SlotAlreadyFilled(int worker, int64_t base_version) const {
  if (base_version < version_) return true;  // that round is complete, every slot in
  for (const PushKey& k : round_keys_) {
    if (k.worker == worker) return true;
  }
  return false;
}

void ParameterShard::RecordTables() {
  for (const auto& v : variables_) {
    if (v->embedding) {
      metrics_.SetEmbeddingStats(v->spec.name(), v->table->stats(), v->table->options().max_bytes);
    }
  }
}

std::optional<PushReply> ParameterShard::DecidedBefore(const PushKey& key) {
  PushReply reply;
  Replication replication;
  {
    absl::MutexLock l(&mu_);
    const PushDedup::Lookup seen = dedup_.Check(key);
    if (seen.verdict != PushDedup::Verdict::kSeen) return std::nullopt;
    metrics_.RecordDedupHit();
    reply.outcome =
        seen.outcome == PUSH_OUTCOME_STALE ? PUSH_OUTCOME_STALE : PUSH_OUTCOME_DUPLICATE;
    if (reply.outcome == PUSH_OUTCOME_STALE) reply.status = WhyStale();
    reply.version = version_;
    // Its first decision may still be on its way to the backup.
    if (reply.outcome == PUSH_OUTCOME_DUPLICATE) replication = NewestLocked();
  }
  return Acknowledged(std::move(reply), replication);
}

absl::Status ParameterShard::WhyStale() const {
  if (mode_ == UPDATE_MODE_SYNC) {
    return WithReason(
        absl::AbortedError("the push belongs to a sync round that is over (it was computed from "
                           "an older version, or its worker already pushed into this round); "
                           "not applied: train the batch again on the current parameters"),
        ERROR_REASON_WRONG_ROUND);
  }
  return WithReason(absl::AbortedError(absl::StrCat(
                        "the push was computed from a version more than ", staleness_bound_,
                        " behind the shard's; not applied: train the batch again on the "
                        "current parameters")),
                    ERROR_REASON_STALE_VERSION);
}

void ParameterShard::PauseUpdates() {
  absl::MutexLock l(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* paused) { return !*paused; }, &paused_));
  paused_ = true;
  mu_.Await(absl::Condition(
      +[](int* n) { return *n == 0; }, &in_flight_));
}

bool ParameterShard::PauseAtRoundBoundary(absl::Time deadline) {
  absl::MutexLock l(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* paused) { return !*paused; }, &paused_));
  draining_ = true;
  auto at_boundary = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return shut_down_ || (round_keys_.empty() && stage_.empty() && !round_closed_ &&
                          in_flight_ == 0);
  };
  const bool reached = mu_.AwaitWithDeadline(absl::Condition(&at_boundary), deadline);
  draining_ = false;
  if (!reached || shut_down_) return false;
  paused_ = true;
  return true;
}

ShardCounters ParameterShard::CutLog(std::shared_ptr<UpdateLog> log) {
  absl::MutexLock l(&mu_);
  ShardCounters c = CountersLocked();
  logging_.store(log != nullptr, std::memory_order_relaxed);
  log_ = std::move(log);
  newest_ticket_ = 0;
  return c;
}

void ParameterShard::ResumeUpdates() {
  absl::MutexLock l(&mu_);
  paused_ = false;
}

void ParameterShard::BookApplied(const PushKey& key, const PushSource& source) {
  ledger_.RecordApplied(key, source.examples, source.origin);
  metrics_.SetAppliedPushes(ledger_.applied_pushes());
}

absl::StatusOr<PushLedger> ParameterShard::ReadLedger(absl::Span<const int64_t> lease_ids,
                                                      LedgerRead read) {
  PushLedger answer;
  Replication replication;
  {
    absl::MutexLock l(&mu_);
    if (read == LedgerRead::kSeal) {
      if (!log_failure_.ok()) return log_failure_;
      // Nothing of a handed-back lease stays staged; no commit names it (the
      // coordinator dropped its worker from the open round first). Forgotten,
      // a retry is refused LEASE_SEALED.
      const std::vector<PushKey> dropped = stage_.DropLeases(lease_ids);
      for (const PushKey& k : dropped) dedup_.Forget(k);
      metrics_.RecordStagedDropped(static_cast<int64_t>(dropped.size()));
      if (log_ != nullptr) AppendLocked(SealEntry(job_id(), lease_ids));
    }
    // What is read must survive the primary: every decision up to now.
    replication = NewestLocked();
    answer = ReadLedgerLocked(lease_ids, read);
  }
  RETURN_IF_ERROR(AwaitReplicated(replication));
  return answer;
}

PushLedger ParameterShard::ReadLedgerLocked(absl::Span<const int64_t> lease_ids, LedgerRead read) {
  // Staged pushes are not counted: they are applied only if committed.
  if (round_keys_.empty()) return ledger_.Read(lease_ids, read);
  // The open round's contributions are applied when it closes, sealed or
  // not: the records behind them count as trained, or a lease handed back
  // now would have them trained again.
  ledger_.Read(lease_ids, read);
  AppliedPushLedger with_round = ledger_;
  for (size_t i = 0; i < round_keys_.size(); ++i) {
    with_round.RecordApplied(round_keys_[i], round_sources_[i].examples, round_sources_[i].origin);
  }
  return with_round.Read(lease_ids, LedgerRead::kOnly);
}

ShardCounters ParameterShard::counters() const {
  absl::MutexLock l(&mu_);
  return CountersLocked();
}

ShardCounters ParameterShard::CountersLocked() const {
  ShardCounters c;
  // An unfinished round's contributions are not in the values: leave them
  // out so that their retries after a restore are accepted.
  PushDedup dedup = dedup_;
  for (const PushKey& k : round_keys_) dedup.Forget(k);
  for (const PushKey& k : stage_.keys()) dedup.Forget(k);
  c.version = round_closed_ ? version_ - 1 : version_;
  c.dedup = dedup.Serialize();
  c.ledger = ledger_.ToProto();
  return c;
}

absl::Status ParameterShard::RestoreCounters(const ShardCounters& counters) {
  ASSIGN_OR_RETURN(PushDedup dedup, PushDedup::Parse(counters.dedup, options_.dedup_window));
  // The checkpoint's counts continue in this run.
  ASSIGN_OR_RETURN(AppliedPushLedger ledger,
                   AppliedPushLedger::FromProto(counters.ledger, request_.generation()));
  {
    absl::MutexLock r(&round_mu_);
    round_sum_->Clear();
  }
  {
    absl::MutexLock l(&mu_);
    dedup_ = std::move(dedup);
    ledger_ = std::move(ledger);
    metrics_.SetAppliedPushes(ledger_.applied_pushes());
    version_ = counters.version;
    round_keys_.clear();
    round_sources_.clear();
    round_summed_ = 0;
    round_closed_ = false;
    metrics_.RecordStagedDropped(static_cast<int64_t>(stage_.Clear().size()));
  }
  gate_.Set(counters.version);
  metrics_.SetVersion(counters.version);
  metrics_.SetVariables(num_variables(), variable_bytes());
  RecordTables();
  return absl::OkStatus();
}

}  // namespace pstrain
