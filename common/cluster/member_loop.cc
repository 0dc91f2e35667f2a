#include "common/cluster/member_loop.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/cluster/member_refusal.h"
#include "common/retry/retry.h"
#include "common/status/error_reason.h"
#include "glog/logging.h"

namespace pstrain {

MemberLoop::MemberLoop(MemberSession& session, MemberRole& role, MemberLoopOptions options)
    : session_(session), role_(role), options_(std::move(options)) {}

bool MemberLoop::shutdown_requested() const {
  absl::MutexLock lock(&mu_);
  return shutdown_requested_;
}

void MemberLoop::NoteShutdown() {
  absl::MutexLock lock(&mu_);
  if (!shutdown_requested_) LOG(INFO) << session_.name() << ": the cluster shuts down";
  shutdown_requested_ = true;
}

absl::Status MemberLoop::Run() {
  absl::Status registered = session_.RegisterUntilAccepted();
  if (!registered.ok()) return absl::IsCancelled(registered) ? absl::OkStatus() : registered;
  HeartbeatHooks hooks;
  hooks.describe_self = [this](HeartbeatRequest* beat) { role_.DescribeSelf(beat); };
  hooks.on_shutdown = [this](int /*exit_code*/) {
    NoteShutdown();
    role_.ShutDown();
  };
  hooks.on_answer = [this](const HeartbeatView& heard) { role_.Heard(heard); };
  session_.StartHeartbeats(std::move(hooks));
  KnownRun known;
  // Ends only with a final refusal, the shutdown (Cancelled by ServeOnce)
  // or the session's cancellation.
  const absl::Status served = RepeatUntilStopped(
      absl::StrCat(session_.CoordinatorName(), " (work for ", session_.name(), ")"),
      options_.pauses, session_.retry_context(),
      [](const absl::Status& status) { return !IsFinalRefusal(status); },
      [&] { return ServeOnce(known); });
  // The role may go away with this loop while heartbeats go on.
  session_.DetachHooks();
  if (absl::IsCancelled(served) || shutdown_requested()) return absl::OkStatus();
  return served;
}

absl::Status MemberLoop::ServeOnce(KnownRun& known) {
  if (session_.last_heartbeat().shutdown) NoteShutdown();
  if (shutdown_requested()) return absl::CancelledError("the cluster shuts down");
  const int64_t registrations = session_.reregistrations();
  absl::StatusOr<Assignment> assignment =
      session_.GetAssignment(known.job_id, known.generation, options_.assignment_wait);
  if (options_.rerun_after_reregistration && session_.reregistrations() != registrations) {
    known = KnownRun();
  }
  if (!assignment.ok()) {
    if (!IsFinalRefusal(assignment.status())) {
      LOG(WARNING) << session_.name() << ": no assignment: " << assignment.status();
    }
    return assignment.status();
  }
  if (assignment->job_id().empty() ||
      (assignment->job_id() == known.job_id && assignment->generation() == known.generation)) {
    known = KnownRun{assignment->job_id(), assignment->generation()};
    return absl::OkStatus();
  }
  return RunOne(*assignment, known);
}

absl::Status MemberLoop::RunOne(const Assignment& assignment, KnownRun& known) {
  const absl::Status ran = role_.RunAssignment(assignment);
  if (ran.ok() || session_.cancelled()) {
    known = KnownRun{assignment.job_id(), assignment.generation()};
    return absl::OkStatus();
  }
  known = KnownRun();
  if (EndsRun(ran) || NeedsRegistration(ran)) {
    LOG(INFO) << session_.name() << ": " << ran.message()
              << "; taking up the job's current assignment";
  } else {
    LOG(ERROR) << session_.name() << ": job " << assignment.job_id() << " failed here: " << ran
               << "; asking for work again after a pause";
  }
  // Whatever the run's own code, a pause and the next request for work
  // follow: a run's failure is not a refusal of this member.
  return absl::AbortedError(
      absl::StrCat("the run of job ", assignment.job_id(), " ended: ", ran.message()));
}

}  // namespace pstrain
