#include "server/coordinator/round_keeper.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/retry/retry.h"
#include "common/status/error_reason.h"
#include "glog/logging.h"
#include "server/coordinator/task_name.h"

namespace pstrain {
namespace coordinator {
namespace {

// How many rounds back a retried join still finds its answer: the round
// just committed and the one before, as a worker retries only the join it
// is waiting for.
constexpr int64_t kRoundsRemembered = 2;

JoinRoundResponse Response(RoundJoin outcome, int64_t global_step) {
  JoinRoundResponse response;
  response.set_outcome(outcome);
  response.set_global_step(global_step);
  return response;
}

}  // namespace

RetryOptions RoundKeeperOptions::DefaultCommitRetry() {
  RetryOptions retry;
  retry.initial_backoff = absl::Milliseconds(100);
  retry.max_backoff = absl::Seconds(5);
  return retry;
}

RoundKeeper::RoundKeeper(std::string job_id, Clock& clock, TrainingGeneration& generation,
                         JobControl& control, CoordinatorMetrics* metrics,
                         RoundKeeperOptions options)
    : job_id_(std::move(job_id)),
      clock_(clock),
      generation_(generation),
      control_(control),
      metrics_(metrics),
      options_(std::move(options)),
      stop_(std::make_shared<StopSignal>()) {}

RoundKeeper::~RoundKeeper() {
  // Every join is answered, also of a job that never ended its rounds.
  Void(absl::AbortedError(absl::StrCat("job ", job_id_, " is gone")));
}

void RoundKeeper::Open(RoundPlan plan, int64_t start) {
  absl::MutexLock lock(&mu_);
  plan_ = std::move(plan);
  round_ = start;
}

int64_t RoundKeeper::round() const {
  absl::MutexLock lock(&mu_);
  return round_;
}

void RoundKeeper::Join(const JoinRoundRequest& request, JoinDone done) {
  std::vector<Answer> answers;
  {
    absl::MutexLock lock(&mu_);
    AnswerLocked(request, std::move(done), answers);
  }
  CommitFullRounds(std::move(answers));
}

void RoundKeeper::AnswerLocked(const JoinRoundRequest& request, JoinDone done,
                               std::vector<Answer>& answers) {
  auto answer = [&](absl::StatusOr<JoinRoundResponse> response) {
    answers.emplace_back(std::move(done), std::move(response));
  };
  if (!plan_.has_value()) {
    return answer(absl::FailedPreconditionError(
        absl::StrCat("job ", job_id_,
                     " agrees no sync rounds: it is not in sync mode, or its one parameter "
                     "server decides its rounds alone")));
  }
  if (!refusal_.ok()) return answer(refusal_);
  if (request.generation() != 0 && request.generation() != generation_.number()) {
    return answer(WithReason(
        absl::FailedPreconditionError(absl::StrCat(
            "job ", job_id_, " rolled back to a checkpoint; round ", request.round(),
            " of generation ", request.generation(), " is void: take the job's new assignment")),
        ERROR_REASON_RUN_ROLLED_BACK));
  }
  const int rank = request.task().index();
  if (request.task().type() != TASK_TYPE_WORKER || rank < 0 || rank >= plan_->max_workers) {
    return answer(absl::InvalidArgumentError(
        absl::StrCat(TaskName(request.task()), " is not a worker of job ", job_id_,
                     ", whose workers are worker/0 .. worker/", plan_->max_workers - 1)));
  }
  if (request.push_incarnation() == 0 || request.push_sequence() == 0) {
    return answer(absl::InvalidArgumentError("a join names its push: incarnation and sequence"));
  }
  const PushKey push{rank, request.push_incarnation(), request.push_sequence()};
  if (auto found = answers_.find(push); found != answers_.end()) return answer(found->second);
  if (committing_.has_value() && committing_->round == request.round()) {
    auto member = committing_->members.find(rank);
    if (member != committing_->members.end() && member->second.push == push) {
      // A retry while its round commits: answered with the commit.
      member->second.waiting.push_back(std::move(done));
      return;
    }
  }
  if (request.round() > round_) {
    return answer(WithReason(
        absl::FailedPreconditionError(absl::StrCat("round ", request.round(), " of job ", job_id_,
                                                   " has not started: the open round is ", round_)),
        ERROR_REASON_WRONG_ROUND));
  }
  if (request.round() < round_) return answer(LateLocked(request.round(), push));
  AdmitLocked(push, request.incarnation(), std::move(done), answers);
}

void RoundKeeper::AdmitLocked(const PushKey& push, uint64_t incarnation, JoinDone done,
                              std::vector<Answer>& answers) {
  const int rank = std::get<0>(push);
  const bool past_limit = plan_->max_steps > 0 && round_ >= plan_->max_steps;
  auto admitted = members_.find(rank);
  if (past_limit || (admitted == members_.end() &&
                     static_cast<int>(members_.size()) >= plan_->members_per_round)) {
    answers.emplace_back(std::move(done), LateLocked(round_, push));
    return;
  }
  if (admitted != members_.end()) {
    Member& member = admitted->second;
    if (member.push == push) {
      member.waiting.push_back(std::move(done));
      return;
    }
    if (std::get<1>(push) <= std::get<1>(member.push)) {
      // One push per rank and round: the rank's place is taken.
      answers.emplace_back(std::move(done), LateLocked(round_, push));
      return;
    }
    // A newer incarnation of the rank: the shards replaced the older one's
    // staged push with its own, so only it can be committed.
    const JoinRoundResponse late = LateLocked(round_, member.push);
    for (JoinDone& waiting : member.waiting) answers.emplace_back(std::move(waiting), late);
    members_.erase(admitted);
  }
  Member member;
  member.push = push;
  member.incarnation = incarnation;
  member.waiting.push_back(std::move(done));
  members_.emplace(rank, std::move(member));
}

JoinRoundResponse RoundKeeper::LateLocked(int64_t round, const PushKey& push) {
  if (metrics_ != nullptr) metrics_->AddLateRoundJoins(1);
  const JoinRoundResponse response = Response(ROUND_JOIN_LATE, plan_->step->value());
  RememberLocked(round, push, response);
  return response;
}

void RoundKeeper::RememberLocked(int64_t round, const PushKey& push,
                                 const JoinRoundResponse& response) {
  if (!answers_.emplace(push, response).second) return;
  answered_.emplace_back(round, push);
  while (!answered_.empty() && answered_.front().first < round_ - kRoundsRemembered) {
    answers_.erase(answered_.front().second);
    answered_.pop_front();
  }
}

bool RoundKeeper::CanCommitLocked() const {
  return plan_.has_value() && refusal_.ok() && !committing_.has_value() && holds_ == 0 &&
         static_cast<int>(members_.size()) >= plan_->members_per_round;
}

void RoundKeeper::CommitFullRounds(std::vector<Answer> answers) {
  std::optional<int64_t> committed;
  std::function<void(int64_t)> on_committed;
  mu_.Lock();
  while (CanCommitLocked()) {
    CommitRoundRequest request;
    request.set_job_id(job_id_);
    request.set_generation(generation_.number());
    request.set_round(round_);
    for (const auto& [rank, member] : members_) {
      PushId* id = request.add_members();
      id->set_worker(rank);
      id->set_incarnation(std::get<1>(member.push));
      id->set_sequence(std::get<2>(member.push));
    }
    committing_ = Commit{round_, std::move(members_)};
    members_.clear();
    // Round r + 1 admits while r commits: a worker answered LATE pulls it
    // as soon as the shards applied r.
    ++round_;
    const std::shared_ptr<StopSignal> stop = stop_;
    mu_.Unlock();
    Run(std::move(answers));
    answers.clear();
    const absl::Status status = CommitOnShards(request, *stop);
    if (!status.ok() && !stop->stopped() && !absl::IsCancelled(status)) LoseShard(status);
    mu_.Lock();
    if (std::optional<int64_t> step = FinishCommitLocked(status, answers); step.has_value()) {
      committed = step;
      on_committed = plan_->committed;
    }
  }
  mu_.Unlock();
  Run(std::move(answers));
  if (committed.has_value()) {
    if (on_committed) on_committed(*committed);
    control_.Poke();
  }
}

absl::Status RoundKeeper::CommitOnShards(const CommitRoundRequest& request,
                                         const StopSignal& stop) {
  const std::shared_ptr<ShardGroup> shards = generation_.shards();
  if (shards == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job_id_, " has no parameter servers to commit round ", request.round(), " on"));
  }
  const RetryContext context{clock_, random_, stop};
  // A shard known lost is not waited for: the rollback restores every
  // shard, and a checkpoint's hold or a worker's drop waits for this commit.
  // With replicas, a primary lost (Unavailable), replaced (NOT_PRIMARY) or
  // restarted empty at its address (JOB_ENDED) fails over to its backup
  // meanwhile: each attempt asks the shard's primary of the moment, which
  // answers a round it applied before with its version.
  const RetryablePredicate unavailable = RetryableUnavailable();
  const RetryablePredicate retryable = [&](const absl::Status& status) {
    const ErrorReason reason = ReasonOf(status);
    const bool failing_over = shards->replicated() && (reason == ERROR_REASON_NOT_PRIMARY ||
                                                       reason == ERROR_REASON_JOB_ENDED);
    return (unavailable(status) || failing_over) && !generation_.lost().has_value();
  };
  return shards->ForEach([&](int i, ShardClient& /*first*/) -> absl::Status {
    return RetryUntilStopped(
        absl::StrCat(TaskName(shards->shard(i).task), " (commit of sync round ", request.round(),
                     ")"),
        options_.commit_retry, context, retryable,
        [&] { return shards->shard(i).client->CommitRound(request).status(); });
  });
}

std::optional<int64_t> RoundKeeper::FinishCommitLocked(const absl::Status& status,
                                                       std::vector<Answer>& answers) {
  Commit commit = *std::move(committing_);
  committing_.reset();
  if (!status.ok()) {
    // Nothing of the round counts: the shards roll back (or the job ends).
    const absl::Status why = !refusal_.ok()
                                 ? refusal_
                                 : WithReason(absl::FailedPreconditionError(absl::StrCat(
                                                  "sync round ", commit.round, " of job ", job_id_,
                                                  " could not be committed: ", status.message(),
                                                  "; the job rolls back to its newest checkpoint")),
                                              ERROR_REASON_RUN_ROLLED_BACK);
    for (auto& [rank, member] : commit.members) {
      for (JoinDone& done : member.waiting) answers.emplace_back(std::move(done), why);
    }
    VoidLocked(why, answers);
    return std::nullopt;
  }
  const int64_t step = plan_->step->RaiseTo(commit.round + 1).value_or(commit.round + 1);
  const JoinRoundResponse member_answer = Response(ROUND_JOIN_MEMBER, step);
  for (auto& [rank, member] : commit.members) {
    RememberLocked(commit.round, member.push, member_answer);
    for (JoinDone& done : member.waiting) answers.emplace_back(std::move(done), member_answer);
  }
  if (metrics_ != nullptr) metrics_->AddSyncRoundsCommitted(1);
  return step;
}

void RoundKeeper::LoseShard(const absl::Status& why) {
  const std::string lost =
      absl::StrCat("a parameter server failed a sync round's commit: ", why.message());
  LOG(ERROR) << "job " << job_id_ << ": " << lost;
  const JobPhase phase = control_.phase();
  if (phase == JobPhase::kTraining || phase == JobPhase::kRollingBack) {
    generation_.MarkLost(lost);
  } else {
    control_.Fail(
        absl::UnavailableError(absl::StrCat(lost, ": the shards disagree; the job cannot go on")));
  }
  control_.Poke();
}

void RoundKeeper::Drop(int rank, uint64_t incarnation) {
  std::vector<Answer> answers;
  {
    absl::MutexLock lock(&mu_);
    auto in_commit = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (!committing_.has_value()) return false;
      auto member = committing_->members.find(rank);
      return member != committing_->members.end() && member->second.incarnation == incarnation;
    };
    // Committed on some shards already: it is applied, on all of them.
    auto commit_ended = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !in_commit(); };
    if (!clock_.AwaitWithDeadline(&mu_, absl::Condition(&commit_ended),
                                  clock_.Now() + options_.drop_wait)) {
      LOG(WARNING) << "job " << job_id_ << ": worker/" << rank
                   << " is handed back while sync round " << committing_->round
                   << " is still being committed with it; its leases go "
                   << "back as the shards' ledgers have them now";
    }
    auto member = members_.find(rank);
    if (member != members_.end() && member->second.incarnation == incarnation) {
      const JoinRoundResponse late = LateLocked(round_, member->second.push);
      for (JoinDone& done : member->second.waiting) answers.emplace_back(std::move(done), late);
      members_.erase(member);
    }
  }
  Run(std::move(answers));
}

void RoundKeeper::Void(absl::Status why) {
  std::vector<Answer> answers;
  {
    absl::MutexLock lock(&mu_);
    refusal_ = why;
    stop_->Stop();
    // The commit in progress ends soon (its retries stopped) and answers
    // its members.
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !committing_.has_value(); };
    mu_.Await(absl::Condition(&idle));
    VoidLocked(why, answers);
  }
  Run(std::move(answers));
}

void RoundKeeper::VoidLocked(const absl::Status& why, std::vector<Answer>& answers) {
  if (refusal_.ok()) refusal_ = why;
  stop_->Stop();
  for (auto& [rank, member] : members_) {
    for (JoinDone& done : member.waiting) answers.emplace_back(std::move(done), why);
  }
  members_.clear();
}

void RoundKeeper::Restart(int64_t round, std::optional<int> members_per_round) {
  absl::MutexLock lock(&mu_);
  if (members_per_round.has_value() && plan_.has_value()) {
    plan_->members_per_round = *members_per_round;
  }
  refusal_ = absl::OkStatus();
  stop_ = std::make_shared<StopSignal>();
  round_ = round;
  answers_.clear();
  answered_.clear();
}

void RoundKeeper::Hold() {
  absl::MutexLock lock(&mu_);
  ++holds_;
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !committing_.has_value(); };
  mu_.Await(absl::Condition(&idle));
}

void RoundKeeper::Release() {
  {
    absl::MutexLock lock(&mu_);
    holds_ = std::max(holds_ - 1, 0);
  }
  CommitFullRounds({});
}

void RoundKeeper::Run(std::vector<Answer> answers) {
  for (auto& [done, answer] : answers) done(std::move(answer));
}

}  // namespace coordinator
}  // namespace pstrain
