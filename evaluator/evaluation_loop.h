#ifndef PSTRAIN_EVALUATOR_EVALUATION_LOOP_H_
#define PSTRAIN_EVALUATOR_EVALUATION_LOOP_H_

// The evaluator's life in a cluster: register with the coordinator (and
// again if it restarts), send heartbeats, take each job's assignment, and
// for a job that evaluates:
//
//   train_and_eval   follow WatchCheckpoints; evaluate checkpoints as
//                    EvalSchedule allows (start delay, throttle, never
//                    skipping the final one); release each lease once the
//                    checkpoint is dealt with;
//   continuous_eval  list model_dir for new checkpoints instead, until a
//                    final one (or one at stop.max_steps) is evaluated, or
//                    none came for continuous_eval_timeout;
//   eval             evaluate the newest good checkpoint of model_dir once.
//
// Each checkpoint is verified, loaded, evaluated on eval_data, written to
// model_dir/eval as summaries, exported (best and final), and reported with
// ReportEval: EVALUATED with metrics, MISSING_CHECKPOINT with the reason it
// cannot be read, NO_NEW_CHECKPOINT when continuous_eval gives up, or FAILED
// when the job cannot be evaluated at all. Then the loop waits (a long
// GetAssignment) for the coordinator to move on to another job.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/checkpoint/env.h"
#include "common/export/model_parameters.h"
#include "common/summary/summary_writer.h"
#include "common/clock/clock.h"
#include "common/clock/stop_signal.h"
#include "common/random/random_source.h"
#include "common/cluster/member_loop.h"
#include "common/cluster/member_session.h"
#include "common/retry/retry.h"
#include "grpcpp/grpcpp.h"
#include "evaluator/coordinator_client.h"
#include "evaluator/eval_schedule.h"
#include "evaluator/evaluator_metrics.h"
#include "protos/checkpoint.pb.h"
#include "protos/coordinator.pb.h"

namespace pstrain {
namespace evaluator {

// Opens the writer of a model_dir's eval summaries.
using SummaryWriterFactory =
    std::function<absl::StatusOr<std::unique_ptr<SummaryWriter>>(const std::string& model_dir)>;

struct EvaluationLoopOptions {
  // This evaluator (type EVALUATOR) and its incarnation (non-zero, new at
  // every start).
  TaskId task;
  uint64_t incarnation = 0;
  // Its gRPC server (health) and /metrics endpoint, as registered.
  std::string address;
  std::string metrics_address;
  // Where the coordinator is, to name it in errors; may be empty.
  std::string coordinator_address;

  // Deadline of each unary call to the coordinator. Default 10 s.
  absl::Duration call_timeout = absl::Seconds(10);
  // Deadline of one WatchCheckpoints stream; a stream that reaches it is
  // reopened from the last step seen. Default 10 minutes.
  absl::Duration watch_timeout = absl::Minutes(10);
  // Retries of calls to the coordinator that fail with Unavailable, and
  // the pauses of the loop itself. Registration, reopening the checkpoint
  // stream and asking for work keep trying until Stop (the coordinator may
  // start later); the other calls give up at retry.deadline.
  RetryOptions retry;
  // How long one GetAssignment waits for a change. Default 30 s.
  absl::Duration assignment_wait = absl::Seconds(30);
  // continuous_eval: how often model_dir is listed. Default 5 s.
  absl::Duration model_dir_poll_interval = absl::Seconds(5);
  // continuous_eval: give the job up, reporting NO_NEW_CHECKPOINT, after
  // this long without a new checkpoint. Default: never (until a final
  // checkpoint, stop.max_steps, or the coordinator moves on).
  absl::Duration continuous_eval_timeout = absl::InfiniteDuration();
  // A wait that lasts this long says what it waits for, and again this
  // often. Default 60 s.
  absl::Duration log_waits_every = absl::Seconds(60);

  // Default: a FileSummaryWriter in model_dir/eval.
  SummaryWriterFactory open_summary_writer;
  // Called (from the heartbeat thread) when the coordinator says the
  // cluster shuts down, with the code the process should exit with; the
  // loop stops by itself. May be empty.
  std::function<void(int exit_code)> on_shutdown;
  // MemberSessionOptions::on_membership: the evaluator's readiness. May be
  // empty.
  std::function<void(bool member)> on_membership;
};

// Thread-safe: Start, Stop and the accessors may be called from any thread.
// Evaluation runs on the thread that runs Run (Start's thread), which owns
// the oneDNN context. Its life as a cluster member is a MemberLoop
// (common/cluster/member_loop.h) driving it as a MemberRole.
class EvaluationLoop : private MemberRole {
 public:
  // Talks to the coordinator over `coordinator`. `env`, `clock` and
  // `metrics` are borrowed and must outlive the loop. options.task must
  // have a type and options.incarnation be non-zero.
  EvaluationLoop(std::shared_ptr<grpc::Channel> coordinator, Env& env, Clock& clock,
                 EvaluatorMetrics& metrics, EvaluationLoopOptions options);
  // Stops and joins.
  ~EvaluationLoop() override;

  EvaluationLoop(const EvaluationLoop&) = delete;
  EvaluationLoop& operator=(const EvaluationLoop&) = delete;

  // Runs Run() on a thread of its own; its result goes to the log and to
  // run_status().
  void Start();
  // Makes Run return soon: waits end, calls to the coordinator in flight are
  // cancelled (the client is shut down), an evaluation in progress finishes
  // first. Joins Start's thread.
  void Stop();

  // Registers, then serves jobs until Stop or the coordinator's shutdown.
  // OK then. A final refusal of this member otherwise (IsFinalRefusal):
  // FailedPrecondition PROCESS_REPLACED, InvalidArgument.
  absl::Status Run();

  // Run's result once it has returned; Unknown before.
  absl::Status run_status();
  bool shutdown_requested();

 private:
  struct JobContext;

  // MemberRole: what the heartbeats say of this evaluator, and the
  // cluster's shutdown (on the heartbeat thread); a job, if it evaluates.
  void DescribeSelf(HeartbeatRequest* beat) override;
  void ShutDown() override;
  absl::Status RunAssignment(const Assignment& assignment) override;
  // The member session's callback, on its heartbeat thread.
  void NoteHeartbeat(const HeartbeatRequest& sent, const HeartbeatResponse& answer);
  // Assignment: one job's evaluation, until it is over or the job changes.
  void RunJob(const Assignment& assignment);
  absl::Status PrepareJob(JobContext& job);
  void FollowCheckpoints(JobContext& job);
  void EvaluateNewestOnce(JobContext& job);
  // Follows the job's WatchCheckpoints stream, reopened after each break
  // from the last step seen, until the job's checkpoints are over, the job
  // changes or Stop. On the watch thread.
  void WatchLoop(std::string job_id);
  // One stream, until it ends. OK: reopen at once (it delivered
  // checkpoints, or this evaluator registered again); otherwise the error
  // to pause on. Sets `over` when nothing is to be reopened.
  absl::Status WatchOnce(const std::string& job_id, int64_t& after_step, bool& over);
  void PollModelDir(JobContext& job);

  // One checkpoint: verify, load, evaluate, summarise, export, report,
  // release. Returns the status reported.
  EvalStatus EvaluateAndReport(JobContext& job, const CheckpointCandidate& checkpoint);
  // Verifies, loads and evaluates `checkpoint` (or takes its result from
  // the job's history) into `report` and `metrics`, then writes summaries
  // and exports. The status to report, and why when not EVALUATED.
  EvalStatus EvaluateInto(JobContext& job, const CheckpointCandidate& checkpoint,
                          EvalReport& report, std::map<std::string, double>& metrics,
                          std::string* reason);
  // Writes `metrics` as the job's eval summaries at `step`, if it has any.
  void WriteSummaries(JobContext& job, int64_t step, const std::map<std::string, double>& metrics);
  // Exports the evaluated parameters as the job asks (best and final
  // exports), naming them in `report`; the paths written, space-separated.
  std::string Export(JobContext& job, const CheckpointCandidate& checkpoint,
                     const ModelParameters& parameters,
                     const std::map<std::string, double>& metrics, EvalReport& report);
  void Report(EvalReport report, absl::Duration took, const std::map<std::string, double>& metrics);
  // Sends a report; the session retries while the coordinator is
  // unreachable and registers again if it forgot this evaluator.
  void Send(const EvalReport& report);
  void HandleSkipped(const std::string& job_id, const std::vector<SkippedCandidate>& skipped);
  void Release(const std::string& job_id, int64_t step);
  EvalReport NewReport(const std::string& job_id) const;

  bool stopping();

  // Constant after construction.
  Env& env_;
  Clock& clock_;
  EvaluatorMetrics& metrics_;
  const EvaluationLoopOptions options_;

  StopSignal stop_;
  SeededRandom random_;
  // The loop's own pauses (reopening the checkpoint stream) end with Stop.
  const RetryContext waits_{clock_, random_, stop_};
  std::unique_ptr<MemberSession> member_;
  std::unique_ptr<CoordinatorClient> client_;
  std::thread run_thread_;  // set by Start

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool shutdown_requested_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status run_status_ ABSL_GUARDED_BY(mu_) = absl::UnknownError("the loop has not ended");
  // The job being evaluated ("" between jobs), and whether the coordinator
  // has since said another one runs.
  std::string current_job_ ABSL_GUARDED_BY(mu_);
  bool job_changed_ ABSL_GUARDED_BY(mu_) = false;
  // The current job's schedule; checkpoints arrive from the watch thread.
  std::optional<EvalSchedule> schedule_ ABSL_GUARDED_BY(mu_);
  bool pending_changed_ ABSL_GUARDED_BY(mu_) = false;
  bool stream_ended_ ABSL_GUARDED_BY(mu_) = false;
  bool watching_ ABSL_GUARDED_BY(mu_) = false;
  CheckpointWatch* active_watch_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Why the last evaluation was not done (heartbeats report DEGRADED);
  // empty when it was.
  std::string last_problem_ ABSL_GUARDED_BY(mu_);
};

}  // namespace evaluator
}  // namespace pstrain

#endif  // PSTRAIN_EVALUATOR_EVALUATION_LOOP_H_
