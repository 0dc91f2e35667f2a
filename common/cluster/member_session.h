#ifndef PSTRAIN_COMMON_CLUSTER_MEMBER_SESSION_H_
#define PSTRAIN_COMMON_CLUSTER_MEMBER_SESSION_H_

// What every process needs to be a member of the cluster, written once for
// parameter servers, workers and the evaluator: registration with an
// incarnation, heartbeats that carry the member's own description,
// registering again when the coordinator has forgotten it, the
// membership-deadline fence, the assignment long poll, and shutdown.
//
//   Create ──► Register ──► StartHeartbeats ──► ... ──► Cancel / ~MemberSession
//                 ▲               │
//                 └── NotFound / Aborted: the coordinator restarted, or
//                     marked this incarnation lost; the same incarnation
//                     registers again and the call is repeated
//
// The roles' own clients (the worker's leases and progress, the evaluator's
// reports and checkpoint watch) make their calls through Call(), which
// gives each the same deadline, cancellation, retry and naming. Above it,
// common/cluster/member_loop.h is the life of a member that takes
// assignments (register, heartbeats, one assignment after another).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/cluster/member_refusal.h"
#include "common/net/call_registry.h"
#include "common/random/random_source.h"
#include "common/retry/retry.h"
#include "common/status/error_reason.h"
#include "grpcpp/grpcpp.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {

struct MemberSessionOptions {
  // Who this process is (a TaskId with a type). Required.
  TaskId task;
  // Its gRPC server and /metrics endpoint, as the coordinator should list
  // them; may be empty.
  std::string address;
  std::string metrics_address;
  // Where the coordinator is, to name it in errors and "waiting" lines (a
  // channel does not say); may be empty.
  std::string coordinator_address;
  // Deadline of one call (a long poll adds its wait). Default 10 s.
  absl::Duration call_timeout = absl::Seconds(10);
  // Retries of calls that fail with Unavailable. The default gives up after
  // 5 minutes.
  RetryOptions retry;
  // Fills what the process says of itself into each heartbeat (job_id,
  // step, health, queue_depth); called on the heartbeat thread. May be
  // empty.
  std::function<void(HeartbeatRequest*)> describe_self;
  // Called on the heartbeat thread with each answered heartbeat and what it
  // said. May be empty.
  std::function<void(const HeartbeatRequest& sent, const HeartbeatResponse& answer)> on_heartbeat;
  // Called on the heartbeat thread when the member's standing changes:
  // true once the coordinator answers a heartbeat, false once heartbeats
  // have gone unanswered past MembershipDeadline (the coordinator may have
  // marked it lost). What a Kubernetes readiness probe should see. May be
  // empty.
  std::function<void(bool member)> on_membership;
  // Called once, on the heartbeat thread, when the coordinator says the
  // cluster shuts down, with the code the process should exit with
  // (HeartbeatResponse.exit_code); heartbeats end then. May be empty.
  std::function<void(int exit_code)> on_shutdown;
};

// What the coordinator said in its last heartbeat answer.
struct HeartbeatView {
  // Answers received so far; lets a caller ignore answers older than a
  // change it made.
  int64_t answers = 0;
  std::string job_id;
  // HeartbeatResponse.replica_epoch and ps_addresses: where the job's
  // shards' primaries are.
  uint64_t replica_epoch = 0;
  std::vector<std::string> ps_addresses;
  bool shutdown = false;
  // With shutdown: the code to exit with (common/daemon/exit_codes.h).
  int exit_code = 0;
  absl::Time last_answer;
};

// What a member says of itself in its heartbeats and how it hears the
// cluster's shutdown; each hook set here replaces MemberSessionOptions'.
struct HeartbeatHooks {
  std::function<void(HeartbeatRequest*)> describe_self;
  std::function<void(int exit_code)> on_shutdown;
  // Called on the heartbeat thread with what each answer said.
  std::function<void(const HeartbeatView& heard)> on_answer;
};


// How MemberSession::Call treats an Unavailable answer. Whatever the
// policy, a refusal whose reason says the coordinator does not know this
// caller as it is (NeedsRegistration in common/status/error_reason.h)
// registers again with the same incarnation and repeats the call, up to 3
// times.
struct CallPolicy {
  // Unavailable with one of these reasons is returned at once, for the
  // caller to wait as it sees fit (the worker counts its waits for a data
  // lease, and watches its job while it waits). Any other Unavailable (the
  // coordinator cannot be reached, or asks to be asked again) is retried
  // with backoff up to the retry deadline.
  std::vector<ErrorReason> caller_waits_on;
  // Added to call_timeout (long polls).
  absl::Duration extra_deadline = absl::ZeroDuration();
};

// Thread-safe.
class MemberSession {
 public:
  // A random non-zero incarnation.
  static uint64_t NewIncarnation(RandomSource& random);

  // `clock` and `random` are borrowed and must outlive the session.
  // InvalidArgument: a zero incarnation or a task without a type.
  static absl::StatusOr<std::unique_ptr<MemberSession>> Create(
      std::shared_ptr<grpc::Channel> channel, MemberSessionOptions options, uint64_t incarnation,
      Clock& clock, RandomSource& random);

  MemberSession(const MemberSession&) = delete;
  MemberSession& operator=(const MemberSession&) = delete;
  // Cancels, then joins the heartbeat thread.
  ~MemberSession();

  uint64_t incarnation() const { return incarnation_; }
  const TaskId& task() const { return options_.task; }
  // "worker/3".
  const std::string& name() const { return name_; }
  // "the coordinator at <address>", or "the coordinator" when unknown.
  std::string CoordinatorName() const;

  // Registers this incarnation (again, when called twice), retrying while
  // the coordinator cannot be reached.
  // FailedPrecondition: a newer incarnation of this task has registered;
  //   this process is stale and should exit.
  // AlreadyExists: another live process holds this task index.
  // InvalidArgument: the coordinator refuses the task.
  // DeadlineExceeded: the coordinator stayed unreachable.
  // Cancelled: Cancel() was called.
  absl::Status Register();

  // Registers until the coordinator accepts this member or refuses it
  // finally (IsFinalRefusal in common/cluster/member_refusal.h), pausing
  // with options.retry's backoff and no deadline: the coordinator may start
  // later than this process, and another that holds this task index may be
  // on its way out. Returns OK, the final refusal, or Cancelled.
  absl::Status RegisterUntilAccepted();

  // Starts the heartbeat thread, once: it registers first when Register()
  // has not succeeded (RegisterUntilAccepted), then sends a heartbeat every
  // interval the coordinator asked for. `hooks` that are set replace the
  // options' describe_self and on_shutdown.
  void StartHeartbeats(HeartbeatHooks hooks = {});
  // The hooks StartHeartbeats was given are not called any more (their
  // owner goes away while heartbeats go on): the options' describe_self
  // and on_shutdown take their place. Waits for a call in progress.
  void DetachHooks();

  HeartbeatView last_heartbeat() const;
  // Blocks until a heartbeat answer newer than `answers_seen` arrives or
  // `timeout` (real time) passes; returns the latest view.
  HeartbeatView WaitForHeartbeat(int64_t answers_seen, absl::Duration timeout) const;
  // Until when this process is sure to be a member: the coordinator marks a
  // member lost heartbeat_timeout after the last heartbeat it received, and
  // the last one known to have arrived was sent at the returned time minus
  // that. Three quarters of the timeout leave room for clocks that differ
  // between machines. InfinitePast before registration.
  absl::Time MembershipDeadline() const;
  // Times this process registered again because the coordinator had marked
  // it lost or had forgotten it (a restart). Work begun before one is void:
  // its data went to others, or the job rolled back.
  int64_t reregistrations() const;

  // Long poll: the assignment, once it differs from run `known_generation`
  // of `known_job_id` or after `wait`. Errors as Register (after retrying).
  absl::StatusOr<Assignment> GetAssignment(const std::string& known_job_id,
                                           uint64_t known_generation, absl::Duration wait);

  // One ClusterService call as `policy` says. `what` names it in errors and
  // log lines, which read "<CoordinatorName()> (<what>): <message>".
  template <typename Request, typename Response>
  absl::Status Call(const std::string& what,
                    grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*,
                                                                 const Request&, Response*),
                    const Request& request, Response* response, const CallPolicy& policy = {});

  // For the roles' streaming calls: cancelled with the session.
  CallRegistry& calls() { return calls_; }
  // The session's clock, randomness and cancellation, for the loops of its
  // member: Cancel() ends their pauses too.
  const RetryContext& retry_context() const { return retry_context_; }
  ClusterService::Stub& stub() { return *stub_; }

  // Ends retry pauses, heartbeats and calls in flight, now and later.
  // Idempotent.
  void Cancel();

  // Tells the coordinator that this member leaves the cluster on purpose
  // (`reason`: "SIGTERM"), so that what it held goes back to others at
  // once instead of at its membership deadline. One attempt within
  // `timeout`, made also after Cancel() (a process that stops cancels its
  // session first, then leaves); nothing is retried: a member that cannot
  // say so is lost at its deadline, as before. OK also when this member
  // never registered (there is nothing to hand back).
  absl::Status Leave(const std::string& reason, absl::Duration timeout = absl::Seconds(2));
  bool cancelled() const { return cancelled_.stopped(); }

 private:
  MemberSession(std::shared_ptr<grpc::Channel> channel, MemberSessionOptions options,
                uint64_t incarnation, Clock& clock, RandomSource& random);

  // One attempt with a deadline of call_timeout + extra. A call that ran
  // out of time, or that the coordinator cancelled (it is shutting down),
  // is Unavailable: every call here is safe to repeat. Cancelled means
  // this session was cancelled.
  template <typename Request, typename Response>
  absl::Status Attempt(grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*,
                                                                    const Request&, Response*),
                       const Request& request, Response* response, absl::Duration extra);
  static absl::Status AttemptStatus(const grpc::Status& status, bool session_cancelled);
  // Attempts as `policy` says, retrying Unavailable; errors are prefixed
  // with `named`. Call without registering again.
  template <typename Request, typename Response>
  absl::Status Retried(const std::string& named,
                       grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*,
                                                                    const Request&, Response*),
                       const Request& request, Response* response, const CallPolicy& policy);

  absl::Status RegisterLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(register_mu_);
  // Registers again after the coordinator said it does not know us.
  absl::Status Reregister(const absl::Status& why);
  void HeartbeatLoop();
  // One heartbeat and what its answer asks; false when heartbeats end.
  bool Beat(absl::Time& silent_since, absl::Time& next_log);
  // Records the member's standing; on a change, logs it and calls
  // options_.on_membership. Heartbeat thread only.
  void NoteMembership(bool member);
  // Records an answered heartbeat; true when the cluster shuts down.
  bool NoteAnswer(const HeartbeatRequest& sent, const HeartbeatResponse& answer,
                  absl::Time sent_at);

  // Constant after construction.
  const std::unique_ptr<ClusterService::Stub> stub_;
  const MemberSessionOptions options_;
  const uint64_t incarnation_;
  const std::string name_;
  Clock& clock_;
  StopSignal cancelled_;
  const RetryContext retry_context_;
  CallRegistry calls_;

  std::thread heartbeat_thread_;
  // Set by StartHeartbeats; called by the heartbeat thread with the lock
  // held, so that DetachHooks can end their use.
  absl::Mutex hooks_mu_;
  HeartbeatHooks hooks_ ABSL_GUARDED_BY(hooks_mu_);

  mutable absl::Mutex mu_;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  // As last told to on_membership; heartbeat thread only.
  bool member_ = false;
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(2);
  absl::Duration heartbeat_timeout_ ABSL_GUARDED_BY(mu_) = absl::Seconds(10);
  // When the newest registration or heartbeat that was answered was sent.
  absl::Time confirmed_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t reregistrations_ ABSL_GUARDED_BY(mu_) = 0;
  HeartbeatView heartbeat_ ABSL_GUARDED_BY(mu_);
  bool heartbeats_started_ ABSL_GUARDED_BY(mu_) = false;

  // Serialises registrations.
  absl::Mutex register_mu_;
};

template <typename Request, typename Response>
absl::Status MemberSession::Attempt(
    grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    const Request& request, Response* response, absl::Duration extra) {
  grpc::ClientContext context;
  // RPC deadlines are wall-clock by nature: they bound real waiting.
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout + extra));
  if (!calls_.Add(&context)) return absl::CancelledError("the member session was cancelled");
  const grpc::Status status = ((*stub_).*method)(&context, request, response);
  calls_.Remove(&context);
  return AttemptStatus(status, cancelled_.stopped());
}

template <typename Request, typename Response>
absl::Status MemberSession::Retried(
    const std::string& named,
    grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    const Request& request, Response* response, const CallPolicy& policy) {
  absl::Status status =
      Retry(named, options_.retry, retry_context_, RetryableUnavailable(policy.caller_waits_on),
            [&] { return Attempt(method, request, response, policy.extra_deadline); });
  // Attempts never end DeadlineExceeded (see Attempt): it is the retry
  // giving up, and its message names the call already.
  if (status.ok() || absl::IsDeadlineExceeded(status)) return status;
  return WithPrefix(std::move(status), absl::StrCat(named, ": "));
}

template <typename Request, typename Response>
absl::Status MemberSession::Call(
    const std::string& what,
    grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    const Request& request, Response* response, const CallPolicy& policy) {
  const std::string named = absl::StrCat(CoordinatorName(), " (", what, ")");
  for (int registrations = 0;; ++registrations) {
    absl::Status status = Retried(named, method, request, response, policy);
    if (!NeedsRegistration(status) || registrations >= 3) return status;
    absl::Status registered = Reregister(status);
    if (!registered.ok()) return registered;
  }
}

}  // namespace pstrain

#endif  // PSTRAIN_COMMON_CLUSTER_MEMBER_SESSION_H_
