#ifndef PSTRAIN_WORKER_COORDINATOR_CLIENT_H_
#define PSTRAIN_WORKER_COORDINATOR_CLIENT_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/cluster/member_session.h"
#include "common/random/random_source.h"
#include "grpcpp/grpcpp.h"
#include "protos/coordinator.grpc.pb.h"

namespace pstrain {
namespace worker {

// Who the worker is, where the coordinator is, deadlines and retries; the
// client fills describe_self.
using CoordinatorClientOptions = MemberSessionOptions;

// A worker's own calls to the coordinator's ClusterService, over its
// MemberSession (registration, heartbeats, the assignment long poll): data
// leases and progress reports, with what the worker says of itself in its
// heartbeats. Calls have the session's deadline, retry and re-registration.
// Thread-safe.
class CoordinatorClient {
 public:
  // `clock` and `random` are borrowed and must outlive the client.
  // InvalidArgument: zero incarnation or a task that is not a worker or
  // evaluator.
  static absl::StatusOr<std::unique_ptr<CoordinatorClient>> Create(
      std::shared_ptr<grpc::Channel> channel, CoordinatorClientOptions options,
      uint64_t incarnation, Clock& clock, RandomSource& random);

  CoordinatorClient(const CoordinatorClient&) = delete;
  CoordinatorClient& operator=(const CoordinatorClient&) = delete;
  // Ends the session first: its heartbeat thread reads this client.
  ~CoordinatorClient() { member_.reset(); }

  // Registration, heartbeats, the membership deadline and the assignment.
  MemberSession& member() { return *member_; }

  // The job the heartbeats name ("" between jobs).
  void SetJob(const std::string& job_id);

  // What the heartbeats say of this worker: its job, the global step of
  // the last progress answer, undelivered reports and why.
  void DescribeSelf(HeartbeatRequest* beat) const;

  // A lease on training records of `job_id`, or one with end_of_data.
  // Unavailable (not retried here): every range is leased out to others
  // for now; ask again later. FailedPrecondition: the job is not running.
  absl::StatusOr<DataLease> AcquireDataLease(const std::string& job_id);

  // Completes a lease, handing back `returned` records untrained. With
  // `outcome_unknown` (a push of the lease ended without an answer), the
  // shards' ledgers say what was trained instead of `returned`.
  // NotFound: the lease is unknown or expired (its records were already
  //   re-queued); nothing to do.
  absl::Status CompleteDataLease(const std::string& job_id, int64_t lease_id,
                                 const std::vector<RecordRange>& returned,
                                 bool outcome_unknown = false);

  // Reports progress since the last report. Fills task and incarnation. A
  // report that could not be delivered is kept and sent before the next
  // one, so that its steps, examples and loss are not lost. A refusal that
  // ends the run (EndsRun: the job ended or rolled back) drops the unsent
  // reports.
  absl::StatusOr<ProgressResponse> ReportProgress(ProgressReport report);

  // Asks to join sync round `round` of run `generation` of `job_id` with
  // the push (push_incarnation, push_sequence), which every shard it went
  // to has staged (agreed rounds, docs/design/sync_rounds.md). Answered
  // once the round is committed with it (MEMBER), at once when it is LATE,
  // or Unavailable ROUND_OPEN (not retried here) once `wait` passed with
  // the round still open: ask again, the push keeps its place. Fills task
  // and incarnation; a retry after a lost answer gets the same answer.
  absl::StatusOr<JoinRoundResponse> JoinRound(const std::string& job_id, uint64_t generation,
                                              int64_t round, uint64_t push_incarnation,
                                              uint64_t push_sequence, absl::Duration wait);

 private:
  CoordinatorClient() = default;

  // Keeps what the heartbeats say of this worker up to date after a round
  // of progress reports.
  void NoteReportOutcome(const absl::Status& status, size_t undelivered,
                         std::optional<int64_t> global_step);

  // Set by Create, then constant.
  std::unique_ptr<MemberSession> member_;

  mutable absl::Mutex mu_;
  std::string job_id_ ABSL_GUARDED_BY(mu_);
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;  // the global step of the last progress answer
  int32_t undelivered_reports_ ABSL_GUARDED_BY(mu_) = 0;
  std::string trouble_ ABSL_GUARDED_BY(mu_);  // why the last report failed; empty: healthy

  // Progress reports not delivered yet, oldest first.
  absl::Mutex report_mu_;
  std::deque<ProgressReport> unsent_ ABSL_GUARDED_BY(report_mu_);
};

}  // namespace worker
}  // namespace pstrain

#endif  // PSTRAIN_WORKER_COORDINATOR_CLIENT_H_
