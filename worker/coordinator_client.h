#ifndef PSTRAIN_WORKER_COORDINATOR_CLIENT_H_
#define PSTRAIN_WORKER_COORDINATOR_CLIENT_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "protos/coordinator.grpc.pb.h"
#include "worker/clock.h"
#include "worker/random_source.h"
#include "worker/retry.h"

namespace pstrain {
namespace worker {

struct CoordinatorClientOptions {
  // This process's task (worker/N). Required.
  TaskId task;
  // Its gRPC server and /metrics endpoint, as the coordinator should list
  // them; may be empty.
  std::string address;
  std::string metrics_address;
  // Where the coordinator is, to name it in errors and "waiting" lines
  // (the channel does not say); may be empty.
  std::string coordinator_address;
  // Deadline of one call. Default 10 s.
  absl::Duration call_timeout = absl::Seconds(10);
  // Retries of Unavailable calls. The default gives up after 5 minutes;
  // the trainer loop then starts over.
  RetryOptions retry;
};

// What the coordinator said in its last heartbeat answer.
struct HeartbeatView {
  // Answers received so far; lets a caller ignore answers older than a
  // change it made.
  int64_t answers = 0;
  std::string job_id;
  bool shutdown = false;
  absl::Time last_answer;
};

// A worker's side of the coordinator's ClusterService: registration with
// an incarnation, heartbeats on a background thread, the assignment long
// poll, data leases and progress reports. Every call has a deadline and is
// retried with backoff on Unavailable; a call refused because the
// coordinator does not know this incarnation (NotFound: it restarted;
// Aborted: it marked this process lost) re-registers with the same
// incarnation and is tried again, so work carries on across a coordinator
// restart. Thread-safe.
class CoordinatorClient {
 public:
  // A random non-zero incarnation.
  static uint64_t NewIncarnation(RandomSource& random);

  // `clock` and `random` are borrowed and must outlive the client.
  // InvalidArgument: zero incarnation or a task that is not a worker or
  // evaluator.
  static absl::StatusOr<std::unique_ptr<CoordinatorClient>> Create(
      std::shared_ptr<grpc::Channel> channel, CoordinatorClientOptions options,
      uint64_t incarnation, Clock& clock, RandomSource& random);

  CoordinatorClient(const CoordinatorClient&) = delete;
  CoordinatorClient& operator=(const CoordinatorClient&) = delete;
  // Stops heartbeats and cancels calls in flight.
  ~CoordinatorClient();

  uint64_t incarnation() const { return incarnation_; }
  const TaskId& task() const { return options_.task; }

  // Registers this incarnation (again, when called twice).
  // FailedPrecondition: a newer incarnation of this task has registered;
  //   this process is stale and should exit.
  // AlreadyExists: another live process holds this task index.
  // InvalidArgument: the coordinator refuses the task.
  // DeadlineExceeded: the coordinator stayed unreachable.
  absl::Status Register();

  // Starts the heartbeat thread (after Register), which sends the job set
  // by SetJob every heartbeat interval the coordinator asked for.
  void StartHeartbeats();
  void SetJob(const std::string& job_id);
  HeartbeatView last_heartbeat() const;
  // Until when this process is sure to be a member: the coordinator marks
  // a member lost heartbeat_timeout after the last heartbeat it received,
  // and the last one known to have arrived was sent at the returned time
  // minus that. Three quarters of the timeout leave room for clocks that
  // differ between machines. InfinitePast before registration.
  absl::Time MembershipDeadline() const;
  // Times this process registered again because the coordinator had marked
  // it lost or had forgotten it (a restart). Work begun before one is
  // void: its data went to others, or the job rolled back.
  int64_t reregistrations() const;
  // Blocks until a heartbeat answer newer than `answers_seen` arrives or
  // `timeout` passes; returns the latest view.
  HeartbeatView WaitForHeartbeat(int64_t answers_seen, absl::Duration timeout) const;

  // Long poll: the assignment, once it differs from run `known_generation`
  // of `known_job_id` or after `wait`. Errors as Register (after retrying).
  absl::StatusOr<Assignment> GetAssignment(const std::string& known_job_id,
                                           uint64_t known_generation, absl::Duration wait);

  // A lease on training records of `job_id`, or one with end_of_data.
  // Unavailable (not retried here): every range is leased out to others
  // for now; ask again later. FailedPrecondition: the job is not running.
  absl::StatusOr<DataLease> AcquireDataLease(const std::string& job_id);

  // Completes a lease, handing back `returned` records untrained.
  // NotFound: the lease is unknown or expired (its records were already
  //   re-queued); nothing to do.
  absl::Status CompleteDataLease(const std::string& job_id, int64_t lease_id,
                                 const std::vector<RecordRange>& returned);

  // Reports progress since the last report. Fills task, incarnation and
  // the next sequence number. A report that could not be delivered is kept
  // and sent, with its number and content, before the next one, so that
  // every report counts once. FailedPrecondition: the job ended (its
  // unsent reports are dropped).
  absl::StatusOr<ProgressResponse> ReportProgress(ProgressReport report);

  // Ends retry pauses, heartbeats and calls in flight, now and later.
  void Cancel();

 private:
  // "the coordinator at <address>", or "the coordinator" when unknown.
  std::string CoordinatorName() const;

  CoordinatorClient(std::shared_ptr<grpc::Channel> channel, CoordinatorClientOptions options,
                    uint64_t incarnation, Clock& clock, RandomSource& random);

  // One attempt of a unary call with a deadline of call_timeout + extra.
  template <typename Request, typename Response>
  absl::Status Attempt(grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*,
                                                                    const Request&, Response*),
                       const Request& request, Response* response, absl::Duration extra);

  // Retries Unavailable; re-registers and tries again on Aborted and
  // NotFound when `reregister` is set.
  template <typename Request, typename Response>
  absl::Status Call(const char* what,
                    grpc::Status (ClusterService::Stub::*method)(grpc::ClientContext*,
                                                                 const Request&, Response*),
                    const Request& request, Response* response, absl::Duration extra,
                    bool retry_unavailable, bool reregister);

  absl::Status RegisterOnce();
  // Registers again after the coordinator said it does not know us.
  absl::Status Reregister(const absl::Status& why);
  void HeartbeatLoop();
  // Keeps what the heartbeats say of this worker up to date after a round
  // of progress reports.
  void NoteReportOutcome(const absl::Status& status, size_t undelivered,
                         std::optional<int64_t> global_step);

  // What the heartbeats say of this worker.
  struct SelfReport {
    int64_t step = 0;  // the global step of the last progress answer
    int32_t undelivered_reports = 0;
    std::string trouble;  // why the last report failed; empty: healthy
  };

  // Constant after construction.
  const std::unique_ptr<ClusterService::Stub> stub_;
  const CoordinatorClientOptions options_;
  const uint64_t incarnation_;
  Clock& clock_;
  RandomSource& random_;

  absl::Notification cancelled_;
  std::thread heartbeat_thread_;

  mutable absl::Mutex mu_;
  absl::flat_hash_set<grpc::ClientContext*> calls_ ABSL_GUARDED_BY(mu_);
  absl::Duration heartbeat_interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(2);
  absl::Duration heartbeat_timeout_ ABSL_GUARDED_BY(mu_) = absl::Seconds(10);
  // When the newest registration or heartbeat that was answered was sent.
  absl::Time confirmed_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t reregistrations_ ABSL_GUARDED_BY(mu_) = 0;
  std::string job_id_ ABSL_GUARDED_BY(mu_);
  HeartbeatView heartbeat_ ABSL_GUARDED_BY(mu_);
  bool heartbeats_started_ ABSL_GUARDED_BY(mu_) = false;
  SelfReport self_ ABSL_GUARDED_BY(mu_);

  // Progress reports, numbered 1, 2, ... for this incarnation.
  absl::Mutex report_mu_;
  uint64_t last_report_sequence_ ABSL_GUARDED_BY(report_mu_) = 0;
  std::deque<ProgressReport> unsent_ ABSL_GUARDED_BY(report_mu_);

  // Serialises registrations.
  absl::Mutex register_mu_;
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_COORDINATOR_CLIENT_H_
